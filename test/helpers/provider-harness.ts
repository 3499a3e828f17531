import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { ModelError, type ProviderContext } from '../../src/main/core/models/model-provider.js';
import type { FakeUpstream, UpstreamReply } from './fake-upstream.js';

/** The folders of test/fixtures/providers: answers recorded from each provider's real API. */
/**
 * A provider address where nothing listens: a privileged port no test binds (and not one that
 * fetch refuses to dial, as it does 9). A fake started and closed instead frees an ephemeral port
 * that a test running beside may be given at once.
 */
export const NOBODY_LISTENS = 'http://127.0.0.1:2';

export type RecordedProvider = 'openai' | 'anthropic' | 'lightcone' | 'openai-compatible';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'providers');

/** A recorded answer from test/fixtures/providers/<provider>/<name>.json, parsed afresh each time. */
export function providerFixture<T = any>(provider: RecordedProvider, name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, provider, `${name}.json`), 'utf8')) as T;
}

/**
 * The ModelError a call fails with; fails the test when the call succeeds, fails otherwise, or
 * names `secret` (the API key) in its message.
 */
export async function modelFailure(
  promise: Promise<unknown>,
  secret?: string,
): Promise<ModelError> {
  const error = await promise.then(
    () => expect.fail('the call should have failed'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  if (secret) expect((error as Error).message).not.toContain(secret);
  return error as ModelError;
}

export type ProviderHarness<Reply extends UpstreamReply, Body> = {
  /** The current test's fake provider (a fresh one per test). */
  fake: FakeUpstream<Reply, Body>;
  /** The provider's context pointing at the fake, with these fields replaced. */
  context: (overrides?: Partial<ProviderContext>) => ProviderContext;
};

/**
 * A fake provider started before each test and closed after it, and the context that points a
 * provider at it. Call at the top of a test file.
 */
export function providerHarness<Reply extends UpstreamReply, Body>(options: {
  start: () => Promise<FakeUpstream<Reply, Body>>;
  context: (url: string) => ProviderContext;
}): ProviderHarness<Reply, Body> {
  let current: FakeUpstream<Reply, Body> | undefined;
  const live = () => {
    if (!current) throw new Error('the fake provider runs only inside a test');
    return current;
  };
  beforeEach(async () => {
    current = await options.start();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  const fake: FakeUpstream<Reply, Body> = {
    get url() {
      return live().url;
    },
    get requests() {
      return live().requests;
    },
    reply: (...replies) => live().reply(...replies),
    reset: () => live().reset(),
    close: () => live().close(),
  };
  return {
    fake,
    context: (overrides = {}) => ({ ...options.context(live().url), ...overrides }),
  };
}
