import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_ACTION_TYPES } from '../../src/shared/responses.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { exampleAction, SDK_HEADERS, type Tool } from '../helpers/lightcone-clients.js';
import { pageState } from '../helpers/page-state.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Whatever /v1/responses emits, a client can send straight back into /batch and /execute, as the
 * current examples do with every computer_call: every action type, in every client's dialect.
 */

let server: TestServer;
let fixtures: FixtureServer;
let computer: string;
const TOOL: Tool = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'browser',
};

/** One computer_call of every type the contract lets /v1/responses emit, in pixels. */
function everyAction(pageUrl: string): Array<Record<string, unknown>> {
  return [
    { type: 'click', x: 200, y: 150, button: 'left' },
    { type: 'click', x: 200, y: 150, button: 'middle' },
    { type: 'double_click', x: 200, y: 150 },
    { type: 'triple_click', x: 200, y: 150 },
    { type: 'right_click', x: 250, y: 120 },
    // No space: typed with nothing focused, a space pages the document down.
    { type: 'type', text: 'typed' },
    { type: 'type', text: 'pointed', x: 550, y: 150 },
    { type: 'key', keys: ['shift', 'a'] },
    { type: 'keypress', keys: ['end'] },
    { type: 'key_down', keys: ['shift'] },
    { type: 'key_up', keys: ['shift'] },
    { type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 40 },
    { type: 'hscroll', x: 640, y: 360, scroll_x: 30, scroll_y: 0 },
    { type: 'navigate', url: pageUrl },
    { type: 'drag', x: 150, y: 350, end_x: 450, end_y: 450 },
    { type: 'wait', ms: 5 },
    { type: 'mouse_down', x: 200, y: 150, button: 'left' },
    { type: 'mouse_up', x: 200, y: 150, button: 'left' },
    { type: 'move', x: 300, y: 400 },
    { type: 'terminate', status: 'success', result: 'finished' },
    { type: 'answer', status: 'success', result: '42' },
    { type: 'done', status: 'success', result: 'ok' },
  ];
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-emitted-'));
  const script = join(dir, 'every.json');
  const output = everyAction(`${fixtures.url}/actions.html`).map((action) => ({
    type: 'computer_call',
    action,
  }));
  writeFileSync(script, JSON.stringify({ turns: [{ output }] }));
  server = await startTestServer({
    models: { default: 'every', providers: { every: { provider: 'scripted', script } } },
  });
  computer = (await server.request('POST', '/computers', {})).body.id as string;
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** The actions one client gets, as that client then sends them (the current examples convert). */
async function emitted(headers: Record<string, string>, convert: boolean) {
  const answer = await server.request(
    'POST',
    '/v1/responses',
    { tools: [TOOL], input: 'act' },
    { headers },
  );
  expect(answer.status, answer.text).toBe(200);
  const actions = (answer.body.output as Array<{ type: string; action: Record<string, unknown> }>)
    .filter((item) => item.type === 'computer_call')
    .map((item) => (convert ? exampleAction(item.action, TOOL) : item.action));
  return actions;
}

async function freshPage(): Promise<void> {
  const page = await server.request('POST', `/computers/${computer}/navigate`, {
    url: `${fixtures.url}/actions.html`,
  });
  expect(page.body.status).toBe('success');
}

/** Checks that actions.html recorded an event starting with the given text. */
async function sawOnPage(): Promise<(prefix: string) => boolean> {
  const { events } = await pageState(server, computer);
  return (prefix) => {
    const seen = events.some((event) => event.startsWith(prefix));
    if (!seen) expect.fail(`no "${prefix}" among the page's events:\n${events.join('\n')}`);
    return seen;
  };
}

const CLIENTS = [
  { name: 'plain HTTP', headers: {}, convert: false },
  { name: 'the seed Python SDK', headers: SDK_HEADERS.seedPython, convert: false },
  { name: 'the current Python SDK', headers: SDK_HEADERS.currentPython, convert: true },
  { name: 'the current TypeScript SDK', headers: SDK_HEADERS.currentTypeScript, convert: true },
];

describe('every action /v1/responses emits is accepted back', () => {
  it('emits each action type the contract names', async () => {
    const types = new Set((await emitted({}, false)).map((action) => action.type));
    expect([...types].sort()).toEqual([...OUTPUT_ACTION_TYPES].sort());
  });

  for (const client of CLIENTS) {
    it(`runs them all through /batch for ${client.name}, and the page sees them`, async () => {
      const actions = await emitted(client.headers, client.convert);
      await freshPage();
      const batch = await server.request(
        'POST',
        `/computers/${computer}/batch`,
        { actions },
        { headers: client.headers },
      );
      expect(batch.status, batch.text).toBe(200);
      expect(batch.body).toMatchObject({ success: true, failed_index: null });
      expect(batch.body.results).toHaveLength(actions.length);
      // What ran on the page navigate loaded: the drag and the mouse actions after it.
      const seen = await sawOnPage();
      expect(seen('mousedown 150,350 left')).toBe(true);
      expect(seen('mouseup 450,450 left')).toBe(true);
      expect(seen('mousedown 200,150 left')).toBe(true);
      expect(batch.body.results.at(-3).result).toEqual({ status: 'success', result: 'finished' });
    });

    it(`runs each through /execute for ${client.name}`, async () => {
      const actions = await emitted(client.headers, client.convert);
      await freshPage();
      for (const action of actions.slice(0, 13)) {
        const answer = await server.request(
          'POST',
          `/computers/${computer}/execute`,
          { action },
          { headers: client.headers },
        );
        expect(answer.status, `${JSON.stringify(action)}: ${answer.text}`).toBe(200);
        expect(answer.body.status, `${JSON.stringify(action)}: ${answer.text}`).toBe('success');
      }
      const seen = await sawOnPage();
      expect(seen('click 200,150 left detail=1 on target')).toBe(true);
      expect(seen('auxclick 200,150 middle')).toBe(true);
      expect(seen('click 200,150 left detail=3')).toBe(true);
      expect(seen('contextmenu 250,120 right')).toBe(true);
      expect(seen('mousedown 550,150 left detail=1 on field')).toBe(true);
      // "typed" went nowhere (nothing had focus); the pointed type clicked the field first.
      expect((await pageState(server, computer)).typed).toBe('pointedA');
      for (const action of actions.slice(13)) {
        const answer = await server.request('POST', `/computers/${computer}/execute`, action, {
          headers: client.headers,
        });
        expect(answer.body.status, `${JSON.stringify(action)}: ${answer.text}`).toBe('success');
      }
    });
  }
});
