import { expect } from 'vitest';
import { eventually, type TestServer } from './test-server.js';

export type FixtureState = {
  events: string[];
  typed: string;
  held: string[];
  scroll: [number, number];
  dragMoves: number;
};

/** What actions.html shows, read back through the computer's own /html action. */
export async function pageState(server: TestServer, computerId: string): Promise<FixtureState> {
  const response = await server.request('POST', `/computers/${computerId}/html`, {});
  if (response.body?.status !== 'success') throw new Error(`html failed: ${response.text}`);
  const match = /<script type="application\/json" id="state">([\s\S]*?)<\/script>/.exec(
    response.body.result.html_content,
  );
  if (!match) throw new Error('the page is not actions.html');
  return JSON.parse(match[1]!) as FixtureState;
}

/** What login.html found in a computer's cookies, localStorage and IndexedDB (and more fields). */
export type LoginFound = { cookie: string | null; local: string | null; idb: string | null };

/** Any way of calling the API: a test server, a spawned `benchtop serve`, a timed wrapper. */
export type Call = (method: string, path: string, body?: unknown) => Promise<{ body: any }>;

/**
 * Opens login.html (with `query`, e.g. "?login&mark=alice") on a computer and waits until the
 * page has read back what the browser stored.
 */
export async function visitLoginPage<T extends LoginFound = LoginFound>(
  call: Call,
  fixturesUrl: string,
  computerId: string,
  query = '',
): Promise<T> {
  const navigated = await call('POST', `/computers/${computerId}/navigate`, {
    url: `${fixturesUrl}/login.html${query}`,
  });
  expect(navigated.body.status, JSON.stringify(navigated.body)).toBe('success');
  return eventually(async () => {
    const html = await call('POST', `/computers/${computerId}/html`, {});
    const match = /<script type="application\/json" id="found">([\s\S]*?)<\/script>/.exec(
      html.body.result.html_content as string,
    );
    const found = JSON.parse(match![1]!) as T & { ready?: boolean };
    return found.ready ? found : undefined;
  });
}
