import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'benchtop-scripts-'));
function script(name: string, content: unknown): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

const agentScript = script('agent', {
  turns: [
    {
      output: [
        { type: 'reasoning', text: 'The field is at the top.' },
        { type: 'computer_call', action: { type: 'click', x: 100.4, y: 200 } },
      ],
    },
    { output: [{ type: 'computer_call', action: { type: 'type', text: 'hello' } }] },
    {
      output: [
        { type: 'function_call', name: 'report', arguments: { ok: true } },
        { type: 'message', text: 'Typed it.' },
      ],
    },
  ],
});
// Still thinking when a test shuts its server down, however slow the machine is.
const glacialScript = script('glacial', {
  delay_ms: 60_000,
  turns: [{ output: [{ type: 'message', text: 'never' }] }],
});
const slowScript = script('slow', {
  delay_ms: 1500,
  turns: [{ output: [{ type: 'message', text: 'late' }] }],
});

// Written by the test that pastes stored responses into it.
const pastedScript = script('pasted', { turns: [] });

const models = {
  default: 'agent',
  providers: {
    agent: { provider: 'scripted' as const, script: agentScript },
    slow: { provider: 'scripted' as const, script: slowScript },
    missing: { provider: 'scripted' as const, script: join(dir, 'no-such-script.json') },
    glacial: { provider: 'scripted' as const, script: glacialScript },
    pasted: { provider: 'scripted' as const, script: pastedScript },
  },
};

const TOOL = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'browser',
};

let server: TestServer;
let fixtures: FixtureServer;
let png: string;

beforeAll(async () => {
  server = await startTestServer({ models });
  fixtures = await startFixtureServer();
  const image = await sharp({
    create: { width: 8, height: 8, channels: 3, background: '#336699' },
  })
    .png()
    .toBuffer();
  png = `data:image/png;base64,${image.toString('base64')}`;
});
afterAll(async () => {
  await server.close();
  await fixtures.close();
});

const respond = (body: Record<string, unknown>, key?: string) =>
  server.request('POST', '/v1/responses', body, key ? { key } : {});

const screenshotInput = (url: string, text = 'Type hello in the field') => [
  {
    role: 'user',
    content: [
      { type: 'input_text', text },
      { type: 'input_image', image_url: url },
    ],
  },
];
const callOutput = (callId: string, url: string) => ({
  type: 'computer_call_output',
  call_id: callId,
  output: { type: 'computer_screenshot', image_url: url },
});

describe('POST /v1/responses', () => {
  it('answers text mode with a plain string input and stores the response', async () => {
    const answer = await respond({ model: 'agent', input: 'hi', instructions: 'Be brief.' });
    expect(answer.status).toBe(200);
    const response = answer.body;
    expect(response).toMatchObject({
      object: 'response',
      model: 'agent',
      status: 'completed',
      computer_id: null,
      viewport: null,
      previous_response_id: null,
      error: null,
      instructions: 'Be brief.',
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(response.usage.total_tokens).toBe(
      response.usage.input_tokens + response.usage.output_tokens,
    );
    expect(response.usage.input_tokens).toBeGreaterThan(0);
    expect((await server.request('GET', `/v1/responses/${response.id}`)).body).toEqual(response);
  });

  it('runs a computer-use conversation from this server’s own screenshot URLs, chained', async () => {
    const computer = (await server.request('POST', '/computers', {})).body.id as string;
    try {
      const shot = async () =>
        (await server.request('POST', `/computers/${computer}/screenshot`, {})).body.result
          .screenshot_url as string;
      const first = await respond({ tools: [TOOL], input: screenshotInput(await shot()) });
      expect(first.status).toBe(200);
      expect(first.body.model).toBe('agent'); // models.default
      expect(first.body.viewport).toEqual({ environment: 'browser', width: 1280, height: 720 });
      const [reasoning, call] = first.body.output;
      expect(reasoning).toMatchObject({
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'The field is at the top.' }],
      });
      expect(call).toMatchObject({
        type: 'computer_call',
        status: 'completed',
        pending_safety_checks: [],
        action: { type: 'click', x: 100, y: 200, button: 'left' },
      });
      expect(call.call_id).toMatch(/^call_/);

      const second = await respond({
        tools: [TOOL],
        previous_response_id: first.body.id,
        input: [callOutput(call.call_id, await shot())],
      });
      expect(second.status).toBe(200);
      expect(second.body.previous_response_id).toBe(first.body.id);
      const typed = second.body.output[0];
      expect(typed.action).toEqual({ type: 'type', text: 'hello' });

      // The first call is answered: a second answer to it is refused.
      const again = await respond({
        previous_response_id: second.body.id,
        input: [callOutput(call.call_id, await shot())],
      });
      expect(again.status).toBe(400);
      expect(again.body.param).toBe('input.0.call_id');
      expect(again.body.message).toContain(typed.call_id);

      const third = await respond({
        previous_response_id: second.body.id,
        input: [callOutput(typed.call_id, await shot())],
      });
      const [fn, message] = third.body.output;
      expect(fn).toMatchObject({ type: 'function_call', name: 'report' });
      expect(JSON.parse(fn.arguments)).toEqual({ ok: true });
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Typed it.', annotations: [] }],
      });
      // After the last turn the script answers "done"; a new conversation starts at turn 0.
      const fourth = await respond({
        previous_response_id: third.body.id,
        input: [{ type: 'function_call_output', call_id: fn.call_id, output: 'ok' }],
      });
      expect(fourth.body.output[0].content[0].text).toBe('done');
      const fresh = await respond({ input: screenshotInput(png) });
      expect(fresh.body.output[1].action.type).toBe('click');
    } finally {
      await server.request('DELETE', `/computers/${computer}`);
    }
  });

  it('accepts earlier output items sent back verbatim as client-side history', async () => {
    const first = await respond({ tools: [TOOL], input: screenshotInput(png) });
    const call = first.body.output[1];
    const history = [...screenshotInput(png), ...first.body.output, callOutput(call.call_id, png)];
    const second = await respond({ tools: [TOOL], input: history });
    expect(second.status).toBe(200);
    expect(second.body.status).toBe('completed');
    // The history holds the model's first answer: this is its second turn, not the first again.
    expect(second.body.output).toMatchObject([
      { type: 'computer_call', action: { type: 'type', text: 'hello' } },
    ]);
    const secondCall = second.body.output[0];
    const third = await respond({
      tools: [TOOL],
      input: [...history, ...second.body.output, callOutput(secondCall.call_id, png)],
    });
    expect(third.body.output.map((item: { type: string }) => item.type)).toEqual([
      'function_call',
      'message',
    ]);
  });

  it('replays stored responses pasted into a script as its turns', async () => {
    const first = await respond({ tools: [TOOL], input: screenshotInput(png) });
    const stored = await server.request('GET', `/v1/responses/${first.body.id}`);
    const call = first.body.output[1];
    const second = await respond({
      previous_response_id: first.body.id,
      input: [callOutput(call.call_id, png)],
    });
    const third = await respond({ previous_response_id: second.body.id, input: 'go on' });
    // A whole response as the first turn; the last one's output items as they are, the second.
    writeFileSync(
      pastedScript,
      JSON.stringify({ turns: [stored.body, { output: third.body.output }] }),
    );
    const replayed = await respond({ model: 'pasted', tools: [TOOL], input: screenshotInput(png) });
    expect(replayed.status, replayed.text).toBe(200);
    const withoutIds = (items: Array<Record<string, unknown>>) =>
      items.map(({ id: _id, call_id: _callId, ...rest }) => rest);
    expect(withoutIds(replayed.body.output)).toEqual(withoutIds(first.body.output));
    const next = await respond({
      model: 'pasted',
      previous_response_id: replayed.body.id,
      input: [callOutput(replayed.body.output[1].call_id, png)],
    });
    expect(withoutIds(next.body.output)).toEqual(withoutIds(third.body.output));
    expect(next.body.output[0]).toMatchObject({ name: 'report', arguments: '{"ok":true}' });
  });

  it('refuses what it cannot use with a 400 or 404 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, number, string, RegExp]> = [
      [
        { model: 'nope', input: 'x' },
        400,
        'model',
        /unknown model "nope".*agent, slow, missing, glacial/,
      ],
      [
        { previous_response_id: 'resp_nothing', input: 'x' },
        404,
        'previous_response_id',
        /resp_nothing/,
      ],
      [{ input: [callOutput('call_unknown', png)] }, 400, 'input.0.call_id', /not an open call/],
      [
        { input: screenshotInput('data:image/png;base64,aGVsbG8gd29ybGQ=') },
        400,
        'input.0.content.1.image_url',
        /not a PNG, JPEG, GIF or WebP/,
      ],
      [
        { input: screenshotInput(`${fixtures.url}/missing.png`) },
        400,
        'input.0.content.1.image_url',
        /HTTP 404/,
      ],
      [
        { input: screenshotInput(`${server.url}/screenshots/comp_gone/${'a'.repeat(32)}.png`) },
        400,
        'input.0.content.1.image_url',
        /no longer exists/,
      ],
      [
        { input: screenshotInput('ftp://example.com/a.png') },
        400,
        'input.0.content.1.image_url',
        /http\(s\) or data:/,
      ],
      [{ input: [{ type: 'mystery' }] }, 400, 'input.0.type', /message, computer_call_output/],
      [{ input: 'x', tools: [{ type: 'web_search' }] }, 400, 'tools.0.type', /computer_use/],
    ];
    for (const [body, status, param, message] of cases) {
      const answer = await respond(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.param).toBe(param);
      expect(answer.body.message).toMatch(message);
    }
  });

  it('fails a response whose model cannot answer, and keeps serving', async () => {
    const answer = await respond({ model: 'missing', input: 'x' });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_rejected');
    expect(answer.body.error.message).toContain('no-such-script.json');
    expect((await respond({ input: 'x' })).body.status).toBe('completed');
  });
});

describe('background, cancel and delete', () => {
  it('returns in_progress at once and completes later', async () => {
    const started = await respond({ model: 'slow', input: 'x', background: true });
    expect(started.body.status).toBe('in_progress');
    expect(started.body.output).toEqual([]);
    await eventually(async () => {
      const current = await server.request('GET', `/v1/responses/${started.body.id}`);
      expect(current.body.status).toBe('completed');
      expect(current.body.output[0].content[0].text).toBe('late');
      return true;
    }, 10_000);
  });

  it('cancels an in_progress response; a finished one cannot be cancelled', async () => {
    // Streamed, so the test sees the model's call end: the stream closes only then.
    const reader = await SseReader.post(`${server.url}/v1/responses`, server.key, {
      model: 'slow',
      input: 'x',
      background: true,
      stream: true,
    });
    const started = (await reader.next())!.data as { response: { id: string; status: string } };
    expect(started.response.status).toBe('in_progress');
    const id = started.response.id;
    const cancelled = await server.request('POST', `/v1/responses/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const events = (await reader.all()).map((event) => event.data as { type: string });
    expect(events.at(-1)!.type).toBe('response.cancelled');
    // The model's call has ended: its answer, had it come, did not replace the cancellation.
    const later = await server.request('GET', `/v1/responses/${id}`);
    expect(later.body.status).toBe('cancelled');
    expect(later.body.output).toEqual([]);
    const again = await server.request('POST', `/v1/responses/${id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.message).toContain('cancelled');
  });

  it('deletes for good, and other organizations see 404', async () => {
    const created = (await respond({ input: 'x' })).body;
    const { key: other } = server.core.keys.create('other');
    const foreign = await server.request('GET', `/v1/responses/${created.id}`, undefined, {
      key: other,
    });
    expect(foreign.status).toBe(404);
    const chained = await respond({ previous_response_id: created.id, input: 'y' }, other);
    expect(chained.status).toBe(404);
    expect(
      (await server.request('DELETE', `/v1/responses/${created.id}`, undefined, { key: other }))
        .status,
    ).toBe(404);

    const deleted = await server.request('DELETE', `/v1/responses/${created.id}`);
    expect(deleted.body).toEqual({ id: created.id, object: 'response.deleted', deleted: true });
    expect((await server.request('GET', `/v1/responses/${created.id}`)).status).toBe(404);
    expect((await server.request('DELETE', `/v1/responses/${created.id}`)).status).toBe(404);
    expect((await server.request('POST', `/v1/responses/${created.id}/cancel`)).status).toBe(404);
  });
});

describe('streaming', () => {
  it('sends the OpenAI-style event sequence, the full response last, then closes', async () => {
    const reader = await SseReader.post(`${server.url}/v1/responses`, server.key, {
      tools: [TOOL],
      input: screenshotInput(png),
      stream: true,
    });
    expect(reader.response.headers.get('content-type')).toContain('text/event-stream');
    const events = (await reader.all()).map((event) => event.data as Record<string, any>);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(events[0]!.response.status).toBe('in_progress');
    const final = events.at(-1)!.response;
    expect(final.status).toBe('completed');
    expect(final.output[1]).toEqual(events[5]!.item);
    expect((await server.request('GET', `/v1/responses/${final.id}`)).body).toEqual(final);
  });

  it('streams message text as output_text deltas', async () => {
    const reader = await SseReader.post(`${server.url}/v1/responses`, server.key, {
      model: 'slow',
      input: 'x',
      stream: true,
    });
    const events = (await reader.all()).map((event) => event.data as Record<string, any>);
    const delta = events.find((event) => event.type === 'response.output_text.delta');
    expect(delta).toMatchObject({ output_index: 0, content_index: 0, delta: 'late' });
    expect(events.at(-1)!.type).toBe('response.completed');
  });

  it('answers bad input of a streamed request with a plain JSON 400', async () => {
    const answer = await respond({ model: 'nope', input: 'x', stream: true });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/json');
  });
});

describe('models and chat', () => {
  it('lists every configured model with its provider', async () => {
    const answer = await server.request('GET', '/v1/models');
    expect(answer.body.object).toBe('list');
    expect(answer.body.data.map((m: { id: string }) => m.id)).toEqual([
      'agent',
      'slow',
      'missing',
      'glacial',
      'pasted',
    ]);
    expect(answer.body.data[0]).toMatchObject({
      object: 'model',
      owned_by: 'benchtop',
      provider: 'scripted',
    });
    expect(Number.isInteger(answer.body.data[0].created)).toBe(true);
  });

  it('answers chat completions from the model’s provider, streamed or not', async () => {
    const answer = await server.request('POST', '/v1/chat/completions', {
      model: 'slow',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.object).toBe('chat.completion');
    expect(answer.body.choices[0].message).toEqual({ role: 'assistant', content: 'late' });

    const reader = await SseReader.post(`${server.url}/v1/chat/completions`, server.key, {
      model: 'slow',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
    });
    const chunks = (await reader.all()).map((event) => event.data as Record<string, any>);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('late');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  it('maps a provider failure of chat to a 502 naming the cause', async () => {
    const answer = await server.request('POST', '/v1/chat/completions', {
      model: 'missing',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(answer.status).toBe(502);
    expect(answer.body.code).toBe('model_error');
    expect(answer.body.message).toContain('no-such-script.json');
  });
});

describe('durability', () => {
  it('keeps responses across a restart, chaining included; in-flight ones fail as interrupted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-responses-'));
    const first = await startTestServer({ models }, { dataDir });
    const created = (
      await first.request('POST', '/v1/responses', { tools: [TOOL], input: screenshotInput(png) })
    ).body;
    const pending = (
      await first.request('POST', '/v1/responses', {
        model: 'glacial',
        input: 'x',
        background: true,
      })
    ).body;
    await first.close();

    const second = await startTestServer({ models }, { dataDir });
    try {
      expect((await second.request('GET', `/v1/responses/${created.id}`)).body).toEqual(created);
      const interrupted = (await second.request('GET', `/v1/responses/${pending.id}`)).body;
      expect(interrupted.status).toBe('failed');
      expect(interrupted.error.code).toBe('interrupted');
      const next = await second.request('POST', '/v1/responses', {
        previous_response_id: created.id,
        input: [callOutput(created.output[1].call_id, png)],
      });
      expect(next.body.output[0].action).toEqual({ type: 'type', text: 'hello' });
    } finally {
      await second.close();
    }
  });
});
