import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/shared/approvals.js';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../helpers/fake-chat-completions.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A request whose answer is slow (its action waits on a person, a long shell command) stays alive
 * however long it takes, for clients that give up on a silent connection (the SDKs after 60 s).
 * Here heartbeats come every 0.2 s and the client gives up after 0.6 s of silence, as httpx's
 * read timeout does; the person takes 2 s, and so does the command.
 */

const HEARTBEAT_MS = 200;
const CLIENT_GIVES_UP_MS = 600;
const PAY = { x: 100, y: 60 };

let server: TestServer;
let fixtures: FixtureServer;
let local: FakeChatCompletions;
let id: string;

/** A model that takes 2 s to answer (a local one on a CPU takes minutes). */
const slowModel = join(mkdtempSync(join(tmpdir(), 'benchtop-slow-model-')), 'slow.json');
writeFileSync(
  slowModel,
  JSON.stringify({ delay_ms: 2000, turns: [{ output: [{ type: 'message', text: 'at last' }] }] }),
);

beforeAll(async () => {
  local = await startFakeChatCompletions();
  [server, fixtures] = await Promise.all([
    startTestServer(
      {
        models: {
          providers: {
            slow: { provider: 'scripted', script: slowModel },
            local: { provider: 'openai-compatible', base_url: local.url },
          },
        },
      },
      { sse: { heartbeatMs: HEARTBEAT_MS } },
    ),
    startFixtureServer(),
  ]);
  const policies = await server.request('PUT', '/policies', [
    {
      id: 'pay',
      description: 'paying needs a person',
      when: { target: { role: 'button', name_pattern: '^pay' } },
      then: 'ask',
    },
    {
      id: 'rm',
      description: 'removing needs a person',
      when: { command_pattern: '\\brm\\b' },
      then: 'ask',
    },
  ]);
  expect(policies.status, policies.text).toBe(200);
  id = (await server.request('POST', '/computers', {})).body.id;
  const shown = await server.request('POST', `/computers/${id}/navigate`, {
    url: `${fixtures.url}/checkout.html`,
  });
  expect(shown.body.status, shown.text).toBe('success');
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close(), local?.close()]);
});

type Sent = { status: number; contentType: string | undefined; text: string };

/**
 * POSTs as an SDK does, through a socket that errors after CLIENT_GIVES_UP_MS without a byte.
 * `onHeaders` is called when the status line arrives.
 */
function post(path: string, body: unknown, onHeaders?: () => void): Promise<Sent> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        timeout: CLIENT_GIVES_UP_MS,
        headers: {
          authorization: `Bearer ${server.key}`,
          'content-type': 'application/json',
          ...SDK_HEADERS.currentPython,
        },
      },
      (res: IncomingMessage) => {
        onHeaders?.();
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, contentType: res.headers['content-type'], text }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no byte for ${CLIENT_GIVES_UP_MS} ms`)));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * The lines of an NDJSON answer as the Python SDK reads them: a line is what comes before each
 * newline, whitespace before it included (JSON parsers skip it); what follows the last newline
 * must be nothing, since the SDK parses that rest too.
 */
function sdkLines(text: string): unknown[] {
  const parts = text.split('\n');
  expect(parts.pop(), 'the answer ends with a newline').toBe('');
  return parts.map((part) => JSON.parse(part) as unknown);
}

/** The data of each event of an SSE answer, as the SDKs read them (comments skipped). */
function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
}

const pending = (): Promise<Approval> =>
  eventually(async () => {
    const list = await server.request<Approval[]>('GET', `/approvals?status=pending`);
    return list.body.find((approval) => approval.computer_id === id);
  });

/** The person looks for a while, then decides. */
async function decideLater(verb: 'approve' | 'deny', note?: string): Promise<void> {
  const approval = await pending();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const decided = await server.request('POST', `/approvals/${approval.id}/${verb}`, { note });
  expect(decided.status, decided.text).toBe(200);
}

describe('a request whose action waits on a person', () => {
  it('is kept alive until the decision, and answers as usual once approved', async () => {
    let headersAt = 0;
    const clicked = post(`/computers/${id}/click`, PAY, () => (headersAt = Date.now()));
    await decideLater('approve');
    const answer = await clicked;
    expect(headersAt, 'the status line came before the decision').toBeGreaterThan(0);
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    // Spaces while the person looked, then the action's answer: one JSON value.
    expect(answer.text).toMatch(/^ +\{/);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'success' });
    const html = await server.request('POST', `/computers/${id}/html`, {});
    expect(html.body.result.html_content).toContain('<p id="status">paid</p>');
  });

  it('a batch too; denied, it says so in its own answer', async () => {
    const batch = post(`/computers/${id}/batch`, {
      actions: [{ type: 'click', ...PAY }],
    });
    await decideLater('deny', 'not now');
    const answer = await batch;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({
      success: false,
      failed_index: 0,
      error_message: 'denied: not now',
    });
  });

  it('a shell command that runs longer than the client waits answers as usual', async () => {
    const ran = await post(`/computers/${id}/exec/sync`, { command: 'sleep 2; echo done' });
    expect(ran.status).toBe(200);
    expect(ran.text).toMatch(/^ +\{/);
    expect(JSON.parse(ran.text)).toEqual({ stdout: 'done\n', stderr: '', exit_code: 0 });
  });
});

describe('a streamed shell command', () => {
  it('quiet for longer than the client waits, comes whole', async () => {
    const ran = await post(`/computers/${id}/exec`, { command: 'sleep 2; echo done' });
    expect(ran.status).toBe(200);
    expect(ran.contentType).toMatch(/^application\/x-ndjson/);
    expect(ran.text).toMatch(/^ +\{/);
    expect(sdkLines(ran.text)).toEqual([
      { type: 'stdout', data: 'done\n' },
      { type: 'exit', code: 0 },
    ]);
  });

  it('held for a person, is kept alive; approved it runs, denied it ends with why', async () => {
    const approved = post(`/computers/${id}/exec`, { command: 'rm -f nothing-here; echo gone' });
    await decideLater('approve');
    expect(sdkLines((await approved).text)).toEqual([
      { type: 'stdout', data: 'gone\n' },
      { type: 'exit', code: 0 },
    ]);
    const denied = post(`/computers/${id}/exec`, { command: 'rm -rf /tmp/nothing' });
    await decideLater('deny', 'not this one');
    const answer = await denied;
    expect(answer.status).toBe(200);
    expect(sdkLines(answer.text)).toEqual([
      { type: 'error', code: 'forbidden', message: 'denied: not this one' },
    ]);
  });
});

describe('a response from a model slower than the client waits', () => {
  it('is kept alive and answered once, as usual', async () => {
    const answered = await post('/v1/responses', { model: 'slow', input: 'take your time' });
    expect(answered.status).toBe(200);
    expect(answered.text).toMatch(/^ +\{/);
    const response = JSON.parse(answered.text);
    expect(response).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(response.output)).toContain('at last');
    // One model call: the client did not give up and send it again.
    const usage = await server.request('GET', `/v1/usage?response_id=${response.id}`);
    expect(usage.body.data).toHaveLength(1);
  });

  it('a chat completion too', async () => {
    const answered = await post('/v1/chat/completions', {
      model: 'slow',
      messages: [{ role: 'user', content: 'take your time' }],
    });
    expect(answered.status).toBe(200);
    expect(answered.text).toMatch(/^ +\{/);
    expect(JSON.parse(answered.text)).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'at last' } }],
    });
  });
});

/**
 * Sends a request as an SDK does and goes away once `leave` says so, given the text so far (a
 * program ended mid-call).
 */
function sendAndLeave(
  path: string,
  body: unknown,
  leave: (text: string) => boolean,
): Promise<void> {
  const url = new URL(path, server.url);
  return new Promise((resolve) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.key}`,
        'content-type': 'application/json',
        ...SDK_HEADERS.currentPython,
      },
    });
    let text = '';
    const check = () => {
      if (!leave(text)) return;
      req.destroy();
      resolve();
    };
    req.on('response', (res: IncomingMessage) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        check();
      });
    });
    req.on('error', () => resolve());
    req.end(JSON.stringify(body));
    // Whatever came by then: a non-streamed answer sends nothing before the model is done.
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 300);
  });
}

/** The model calls of the slow model since `since`, once there is one. */
const slowCallSince = (since: string) =>
  eventually(async () => {
    const usage = await server.request('GET', `/v1/usage?since=${since}`);
    return (usage.body.data as Array<{ model: string; response_id: string; error: string | null }>)
      .filter((row) => row.model === 'slow')
      .at(0);
  });

describe('a response whose client went away', () => {
  it('is cancelled, and its model call with it', async () => {
    const since = new Date().toISOString();
    await sendAndLeave('/v1/responses', { model: 'slow', input: 'never mind' }, () => false);
    const call = await slowCallSince(since);
    expect(call.error).toBe('cancelled');
    const response = await server.request('GET', `/v1/responses/${call.response_id}`);
    expect(response.body.status).toBe('cancelled');
  });

  it('streamed too', async () => {
    const since = new Date().toISOString();
    let id: string | undefined;
    await sendAndLeave(
      '/v1/responses',
      { model: 'slow', input: 'never mind', stream: true },
      (text) => {
        id = /"id":"(resp_[^"]+)"/.exec(text)?.[1];
        return id !== undefined;
      },
    );
    expect(id, 'the stream named its response').toBeDefined();
    const call = await slowCallSince(since);
    expect(call).toMatchObject({ response_id: id, error: 'cancelled' });
    const response = await server.request('GET', `/v1/responses/${id}`);
    expect(response.body.status).toBe('cancelled');
  });
});

describe('a streamed chat completion from a model slow to its first token', () => {
  const asked = (model: string) => ({
    model,
    stream: true,
    messages: [{ role: 'user', content: 'take your time' }],
  });

  it('is kept alive and brings every chunk', async () => {
    const answered = await post('/v1/chat/completions', asked('slow'));
    expect(answered.status).toBe(200);
    expect(answered.contentType).toMatch(/^text\/event-stream/);
    const chunks = sseData(answered.text) as Array<{
      choices: Array<{ delta: { content?: string } }>;
    }>;
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('at last');
  });

  it('a failure before it opened is still a status', async () => {
    local.reply({
      status: 400,
      json: { error: { message: 'the prompt is longer than the context' } },
    });
    const answered = await post('/v1/chat/completions', asked('local'));
    expect(answered.status).toBe(502);
    expect(JSON.parse(answered.text)).toMatchObject({ code: 'model_error' });
  });

  it('a failure once it opened is its last event', async () => {
    local.reply({
      status: 400,
      delayMs: 1000,
      json: { error: { message: 'the prompt is longer than the context' } },
    });
    const answered = await post('/v1/chat/completions', asked('local'));
    expect(answered.status).toBe(200);
    const events = sseData(answered.text);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      error: {
        code: 'model_error',
        message: expect.stringContaining('the prompt is longer than the context'),
      },
    });
  });
});
