import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/main/core/config.js';
import { isLoopbackHost, localOnlyRefusal } from '../../src/main/core/models/local-only.js';
import { costOf, priceOf } from '../../src/main/core/models/pricing.js';

const tokens = (input: number, output: number, cached = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cached_tokens: cached,
});

describe('pricing', () => {
  const price = { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 };

  it('prices tokens per million, cached input at its own price when there is one', () => {
    expect(costOf(tokens(1_000_000, 0), price)).toBe(2);
    expect(costOf(tokens(1000, 100), price)).toBeCloseTo(0.003, 12);
    expect(costOf(tokens(1000, 0, 400), price)).toBeCloseTo((600 * 2 + 400 * 0.5) / 1e6, 12);
    const { cached_input_per_mtok: _, ...uncached } = price;
    expect(costOf(tokens(1000, 0, 400), uncached)).toBeCloseTo(0.002, 12);
  });

  it('has no cost without a price: unknown is not free', () => {
    expect(costOf(tokens(1000, 1000), null)).toBeNull();
  });

  it('never counts more cached tokens than input tokens', () => {
    expect(costOf(tokens(100, 0, 500), price)).toBeCloseTo((100 * 0.5) / 1e6, 12);
  });

  it("reads the provider entry's price, else the earlier models.prices entry", () => {
    const { models } = resolveSettings({
      stored: {},
      env: {},
      flags: {
        models: {
          providers: {
            priced: { provider: 'scripted', price: { input_per_mtok: 1, output_per_mtok: 4 } },
            legacy: { provider: 'scripted' },
            free: { provider: 'scripted' },
          },
          prices: {
            legacy: { input_per_million: 3, output_per_million: 6, cached_input_per_million: 1 },
            priced: { input_per_million: 99, output_per_million: 99 },
          },
        },
      },
    });
    expect(priceOf(models, 'priced')).toEqual({ input_per_mtok: 1, output_per_mtok: 4 });
    expect(priceOf(models, 'legacy')).toEqual({
      input_per_mtok: 3,
      output_per_mtok: 6,
      cached_input_per_mtok: 1,
    });
    expect(priceOf(models, 'free')).toBeNull();
  });
});

describe('the loopback check of models.local_only', () => {
  it.each(['127.0.0.1', '127.0.0.2', '127.255.255.254', 'localhost', 'LOCALHOST', 'a.localhost'])(
    '%s is loopback',
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );
  it.each(['[::1]', '::1', '::ffff:127.0.0.1', '[::ffff:7f00:1]'])('%s is loopback', (host) =>
    expect(isLoopbackHost(host)).toBe(true),
  );
  it.each([
    '192.0.2.1',
    '10.0.0.1',
    '0.0.0.0',
    '128.0.0.1',
    'localhost.example',
    '127.0.0.1.nip.io',
    'api.openai.com',
    '::',
    '::ffff:192.0.2.1',
    '2001:db8::1',
  ])('%s is not loopback', (host) => expect(isLoopbackHost(host)).toBe(false));

  it('refuses a provider by its base_url, or its default address when it has none', () => {
    expect(
      localOnlyRefusal('local', { provider: 'openai', base_url: 'http://127.0.0.1:9/v1' }),
    ).toBeNull();
    expect(localOnlyRefusal('script', { provider: 'scripted' })).toBeNull();
    const refusal = localOnlyRefusal('gpt', { provider: 'openai' });
    expect(refusal?.kind).toBe('blocked');
    expect(refusal?.message).toBe(
      'model "gpt" is refused: models.local_only is on and its provider\'s address api.openai.com is not on this machine (loopback); point models.providers.gpt.base_url at a local server or turn models.local_only off',
    );
    expect(
      localOnlyRefusal('far', {
        provider: 'openai-compatible',
        base_url: 'http://192.0.2.1:8000/v1',
      })?.kind,
    ).toBe('blocked');
  });
});
