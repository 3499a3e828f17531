import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import {
  calledDone,
  computerCalls,
  DONE_TOOL,
  exampleAction,
  SDK_ENDPOINTS,
  SDK_HEADERS,
  TERMINAL_ACTIONS,
  TypedResponse,
  typedModelOf,
  type OutputItem,
  type Tool,
} from '../helpers/lightcone-clients.js';
import { pageState } from '../helpers/page-state.js';
import { SseReader } from '../helpers/sse.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The loops of the Lightcone SDK examples, old and current, written in this project's words and
 * sent as those SDKs send them, against the real server: the model's clicks land where it meant.
 */

const dir = mkdtempSync(join(tmpdir(), 'benchtop-sdk-versions-'));
const TOOL: Tool = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'browser',
};

/**
 * What the model means, in pixels of actions.html at 1280×720. Points the current examples convert
 * are ones 0–999 can name exactly at this size (1000 steps cannot name all 1280 columns).
 */
const TURNS = [
  [
    { type: 'reasoning', text: 'The blue box is the target.' },
    { type: 'computer_call', action: { type: 'click', x: 200, y: 150 } },
  ],
  [{ type: 'computer_call', action: { type: 'type', text: 'hello', x: 550, y: 150 } }],
  [
    {
      type: 'computer_call',
      action: { type: 'drag', x: 151, y: 350, end_x: 449, end_y: 450 },
    },
    { type: 'computer_call', action: { type: 'right_click', x: 250, y: 120 } },
  ],
  [
    {
      type: 'computer_call',
      action: { type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 300 },
    },
  ],
  [{ type: 'function_call', name: 'done', arguments: { message: 'All done.' } }],
].map((output) => ({ output }));
/** The seed examples end on a message or a terminate action, not a done function. */
const SEED_TURNS = [...TURNS.slice(0, 4), { output: [{ type: 'message', text: 'All done.' }] }];

/** A desktop run of the current examples (simple.py, desktop.py): a click, then done. */
const DESKTOP_POINT = { x: 903, y: 517 };
const DESKTOP_TURNS = [
  { output: [{ type: 'computer_call', action: { type: 'click', ...DESKTOP_POINT } }] },
  { output: [{ type: 'function_call', name: 'done', arguments: {} }] },
];

/** What actions.html must have seen, whichever loop drove it. */
const EXPECTED_EVENTS = [
  'click 200,150 left detail=1 on target',
  'mousedown 550,150 left detail=1 on field',
  'mousedown 151,350 left detail=1 on drag-area',
  'mouseup 449,450 left detail=1 on drag-area',
  'contextmenu 250,120 right',
];

let server: TestServer;
let fixtures: FixtureServer;

function script(name: string, turns: unknown[]): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ turns }));
  return path;
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({
    models: {
      default: 'northstar',
      providers: {
        northstar: { provider: 'scripted', script: script('current', TURNS) },
        seed: { provider: 'scripted', script: script('seed', SEED_TURNS) },
        desktop: { provider: 'scripted', script: script('desktop', DESKTOP_TURNS) },
      },
    },
  });
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

type Headers = Record<string, string>;

async function computerOnFixture(headers: Headers): Promise<string> {
  const created = await server.request('POST', '/computers', { kind: 'browser' }, { headers });
  const id = created.body.id as string;
  const page = await server.request(
    'POST',
    `/computers/${id}/navigate`,
    { url: `${fixtures.url}/actions.html` },
    { headers },
  );
  expect(page.body.status).toBe('success');
  return id;
}

async function screenshotUrl(id: string, headers: Headers): Promise<string> {
  const shot = await server.request('POST', `/computers/${id}/screenshot`, {}, { headers });
  return shot.body.result.screenshot_url as string;
}

/**
 * The current examples' loop (simple.py, desktop.py): the whole history sent every turn, no
 * previous_response_id; each answer's computer calls converted from 0–999 and run as one batch.
 */
async function currentExampleLoop(
  id: string,
  headers: Headers,
  tool: Tool = TOOL,
  model = 'northstar',
) {
  const items: unknown[] = [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Click the target, type hello, drag, then scroll.' },
        { type: 'input_image', image_url: await screenshotUrl(id, headers), detail: 'auto' },
      ],
    },
  ];
  const answers: Array<Record<string, unknown>> = [];
  for (let step = 0; step < 10; step++) {
    const answer = await server.request(
      'POST',
      '/v1/responses',
      { model, tools: [tool, DONE_TOOL], input: items },
      { headers },
    );
    expect(answer.status, answer.text).toBe(200);
    answers.push(answer.body);
    const output = answer.body.output as OutputItem[];
    items.push(...output);
    if (calledDone(output)) return answers;
    const calls = computerCalls(output);
    if (
      calls.length === 0 ||
      calls.some((call) => TERMINAL_ACTIONS.has(call.action.type as string))
    )
      return answers;
    const actions = calls.map((call) => exampleAction(call.action, tool));
    const batch = await server.request('POST', `/computers/${id}/batch`, { actions }, { headers });
    expect(batch.body, batch.text).toMatchObject({ success: true });
    const url = await screenshotUrl(id, headers);
    for (const call of calls) {
      items.push({
        type: 'computer_call_output',
        call_id: call.callId,
        output: { type: 'input_image', image_url: url, detail: 'auto' },
      });
    }
  }
  throw new Error('the loop never ended: the model answered the same turn again and again');
}

/** The seed examples' loop: chained by previous_response_id, pixels, one route per action. */
async function seedExampleLoop(id: string, headers: Headers) {
  const post = (path: string, body: unknown) => server.request('POST', path, body, { headers });
  let answer = await post('/v1/responses', {
    model: 'seed',
    tools: [TOOL],
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Click the target, type hello, drag, then scroll.' },
          { type: 'input_image', image_url: await screenshotUrl(id, headers) },
        ],
      },
    ],
  });
  const answers = [answer.body];
  for (let step = 0; step < 10; step++) {
    const calls = computerCalls(answer.body.output as OutputItem[]);
    if (calls.length === 0) return answers;
    for (const { action: a } of calls) {
      const at = `/computers/${id}`;
      if (a.type === 'click') await post(`${at}/click`, { x: a.x, y: a.y });
      else if (a.type === 'right_click') await post(`${at}/right-click`, { x: a.x, y: a.y });
      else if (a.type === 'type') {
        if (a.x !== undefined) await post(`${at}/click`, { x: a.x, y: a.y });
        await post(`${at}/type`, { text: a.text });
      } else if (a.type === 'drag')
        await post(`${at}/drag`, { x1: a.x, y1: a.y, x2: a.end_x, y2: a.end_y });
      else if (a.type === 'scroll')
        await post(`${at}/scroll`, { dx: a.scroll_x, dy: a.scroll_y, x: a.x, y: a.y });
      else throw new Error(`the seed loop has no case for ${String(a.type)}`);
    }
    const url = await screenshotUrl(id, headers);
    answer = await post('/v1/responses', {
      model: 'seed',
      previous_response_id: answer.body.id,
      tools: [TOOL],
      input: calls.map((call) => ({
        type: 'computer_call_output',
        call_id: call.callId,
        output: { type: 'input_image', image_url: url },
      })),
    });
    expect(answer.status, answer.text).toBe(200);
    answers.push(answer.body);
  }
  throw new Error('the seed loop never ended');
}

async function expectModelMeant(id: string): Promise<void> {
  const state = await pageState(server, id);
  for (const expected of EXPECTED_EVENTS) {
    expect(
      state.events.some((event) => event.startsWith(expected)),
      `${expected} in ${state.events.join(' | ')}`,
    ).toBe(true);
  }
  expect(state.typed).toBe('hello');
  expect(state.scroll).toEqual([0, 300]);
}

describe('the current SDKs’ example loop', () => {
  for (const [name, headers] of [
    ['Python 2.39', SDK_HEADERS.currentPython],
    ['Python 2.35, the first with typed responses', SDK_HEADERS.firstTypedPython],
    ['TypeScript 0.14', SDK_HEADERS.currentTypeScript],
  ] as const) {
    it(`clicks, types and drags where the model meant, for ${name}`, async () => {
      const id = await computerOnFixture(headers);
      const answers = await currentExampleLoop(id, headers);
      expect(answers).toHaveLength(TURNS.length);
      await expectModelMeant(id);
      for (const answer of answers) {
        expect(() => TypedResponse.parse(answer)).not.toThrow();
        expect(typeof answer.created_at).toBe('number');
      }
      const models = answers.flatMap((answer) => (answer.output as unknown[]).map(typedModelOf));
      expect(models).toEqual([
        'untyped', // reasoning
        'computer_call/ActionClick',
        'computer_call/ActionPointAndType',
        'computer_call/ActionDrag',
        'computer_call/ActionClick',
        'computer_call/ActionScroll',
        'function_call',
      ]);
      await server.request('DELETE', `/computers/${id}`);
    });
  }

  it('clicks where the model meant on a desktop computer, as the desktop examples run', async () => {
    const headers = SDK_HEADERS.currentPython;
    const created = await server.request('POST', '/computers', { kind: 'desktop' }, { headers });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    try {
      const tool = { ...TOOL, environment: 'desktop' };
      const answers = await currentExampleLoop(id, headers, tool, 'desktop');
      expect(answers).toHaveLength(DESKTOP_TURNS.length);
      // The pointer rests where the click happened, on the desktop's own display.
      const where = await server.request(
        'POST',
        `/computers/${id}/exec/sync`,
        { command: 'xdotool getmouselocation --shell' },
        { headers },
      );
      expect(where.body.stdout).toContain(`X=${DESKTOP_POINT.x}\nY=${DESKTOP_POINT.y}\n`);
    } finally {
      await server.request('DELETE', `/computers/${id}`);
    }
  });

  it('gets pixels when its computer_use tool asks for them explicitly', async () => {
    const answer = await server.request(
      'POST',
      '/v1/responses',
      { tools: [{ ...TOOL, coordinate_space: 'pixels' }, DONE_TOOL], input: 'go' },
      { headers: SDK_HEADERS.currentPython },
    );
    const call = (answer.body.output as OutputItem[]).find((item) => item.type === 'computer_call');
    expect(call!.action).toEqual({ type: 'click', x: 200, y: 150, button: 'left' });
    expect(typeof answer.body.created_at).toBe('number');
  });
});

describe('the seed SDKs and plain HTTP', () => {
  for (const [name, headers] of [
    ['Python 2.31', SDK_HEADERS.seedPython],
    ['TypeScript 0.7', SDK_HEADERS.seedTypeScript],
    ['plain HTTP', {}],
    ['another vendor’s Stainless SDK', SDK_HEADERS.openAIPython],
  ] as const) {
    it(`get pixels and ISO timestamps, and click where the model meant, for ${name}`, async () => {
      const id = await computerOnFixture(headers);
      const answers = await seedExampleLoop(id, headers);
      expect(answers).toHaveLength(SEED_TURNS.length);
      await expectModelMeant(id);
      expect(answers[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect((answers[2]!.output as OutputItem[])[0]!.action).toEqual({
        type: 'drag',
        x: 151,
        y: 350,
        end_x: 449,
        end_y: 450,
      });
      await server.request('DELETE', `/computers/${id}`);
    });
  }

  it('gives plain HTTP 0–999 when its computer_use tool asks for the model space', async () => {
    const answer = await server.request('POST', '/v1/responses', {
      tools: [{ ...TOOL, coordinate_space: 'model' }],
      input: 'go',
    });
    const call = (answer.body.output as OutputItem[]).find((item) => item.type === 'computer_call');
    expect(call!.action).toEqual({ type: 'click', x: 157, y: 209, button: 'left' });
    expect(typeof answer.body.created_at).toBe('string');
  });

  it('rejects a coordinate_space it does not know, naming the field', async () => {
    const answer = await server.request('POST', '/v1/responses', {
      tools: [{ ...TOOL, coordinate_space: 'percent' }],
      input: 'go',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.param).toBe('tools.0.coordinate_space');
  });
});

describe('a stored response, read back', () => {
  it('is shown to each client in its own dialect, with the tools it was made with', async () => {
    const made = await server.request(
      'POST',
      '/v1/responses',
      { tools: [TOOL], input: 'go' },
      { headers: SDK_HEADERS.currentPython },
    );
    const path = `/v1/responses/${made.body.id}`;
    const typed = await server.request('GET', path, undefined, {
      headers: SDK_HEADERS.currentTypeScript,
    });
    expect(typed.body).toEqual(made.body);
    expect(typed.body.tools).toEqual([TOOL]);
    const plain = await server.request('GET', path);
    expect(Math.floor(Date.parse(plain.body.created_at) / 1000)).toBe(typed.body.created_at);
    const click = (plain.body.output as OutputItem[])[1]!;
    expect(click.action).toEqual({ type: 'click', x: 200, y: 150, button: 'left' });
  });

  it('streams its items in the client’s dialect', async () => {
    const reader = await SseReader.post(
      `${server.url}/v1/responses`,
      server.key,
      { tools: [TOOL], input: 'go', stream: true },
      SDK_HEADERS.currentPython,
    );
    const events = (await reader.all()).map((event) => event.data as Record<string, any>);
    const done = events.find(
      (event) => event.type === 'response.output_item.done' && event.item.type === 'computer_call',
    );
    expect(done!.item.action).toEqual({ type: 'click', x: 157, y: 209, button: 'left' });
    const completed = events.at(-1)!;
    expect(completed.type).toBe('response.completed');
    expect(typeof completed.response.created_at).toBe('number');
  });
});

describe('every method of the current SDKs', () => {
  it('has a route: none is answered "no route"', async () => {
    const unrouted: string[] = [];
    for (const endpoint of SDK_ENDPOINTS) {
      const [method, template] = endpoint.split(' ') as [string, string];
      // Ids nobody has, and bodies no route accepts: each route refuses, nothing is created.
      const path = template.replace('{id}', 'nobody_1').replace('{tab}', 'tab_nobody');
      const answer = await server.request(
        method,
        path,
        method === 'POST' ? { kind: 5 } : undefined,
        {
          headers: SDK_HEADERS.currentPython,
        },
      );
      if (answer.status === 404 && /^no route/.test(answer.body?.message as string)) {
        unrouted.push(endpoint);
      }
      expect(answer.status, `${endpoint}: ${answer.text}`).toBeLessThan(500);
    }
    expect(unrouted).toEqual([]);
  });
});
