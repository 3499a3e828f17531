import type { ProviderPrice, Settings } from '../../../shared/settings.js';

/** The tokens of one model call as its provider reported them. */
export type CallTokens = {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens the provider served from its cache (a part of input_tokens). */
  cached_tokens: number;
};

/**
 * The price of a Benchtop model name: its provider entry's `price`, else the earlier
 * `models.prices` entry (read so that settings written before prices moved keep working).
 */
export function priceOf(models: Readonly<Settings['models']>, name: string): ProviderPrice | null {
  const price = models.providers[name]?.price;
  if (price) return price;
  const legacy = models.prices[name];
  if (!legacy) return null;
  return {
    input_per_mtok: legacy.input_per_million,
    output_per_mtok: legacy.output_per_million,
    ...(legacy.cached_input_per_million === undefined
      ? {}
      : { cached_input_per_mtok: legacy.cached_input_per_million }),
  };
}

/**
 * Dollars of one call, or null without a price (unknown is not free). Cached input tokens are
 * priced at the cached price when there is one, else as any input token.
 */
export function costOf(tokens: CallTokens, price: ProviderPrice | null): number | null {
  if (!price) return null;
  const cached = Math.min(Math.max(tokens.cached_tokens, 0), tokens.input_tokens);
  const cachedPrice = price.cached_input_per_mtok ?? price.input_per_mtok;
  return (
    ((tokens.input_tokens - cached) * price.input_per_mtok +
      cached * cachedPrice +
      tokens.output_tokens * price.output_per_mtok) /
    1_000_000
  );
}
