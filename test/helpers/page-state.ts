import type { TestServer } from './test-server.js';

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
