import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { PACED_FLOOD } from '../helpers/ndjson.js';
import { pageState } from '../helpers/page-state.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A computer's WebSocket (GET /computers/{id}/ws): actions sent as /execute takes them, answered
 * on the socket with the client's id, the computer's events alongside, the same key, gates and
 * organizations as every route; and the SDKs' plain GET of it told how to open it.
 */

let server: TestServer;
let fixtures: FixtureServer;

type Opened = { socket: WebSocket; messages: any[]; next(type: string): Promise<any> };

/** Opens the computer's socket; every message it receives is kept, and can be waited for. */
function open(
  id: string,
  key = server.key,
  headers: Record<string, string> = {},
  autoPong = true,
): Promise<Opened> {
  const url = `${server.url.replace('http', 'ws')}/computers/${id}/ws`;
  const socket = new WebSocket(url, {
    headers: { ...headers, authorization: `Bearer ${key}` },
    autoPong,
  });
  const messages: any[] = [];
  const waiters: Array<() => void> = [];
  socket.on('message', (data: Buffer) => {
    messages.push(JSON.parse(data.toString()));
    for (const wake of waiters.splice(0)) wake();
  });
  const next = async (type: string, seen = 0): Promise<any> => {
    for (;;) {
      const found = messages.slice(seen).find((message) => message.type === type);
      if (found) return found;
      seen = messages.length;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, messages, next: (type) => next(type) }));
    socket.once('error', reject);
  });
}

/** The answer to the message sent with `id`. */
async function send(opened: Opened, message: Record<string, unknown>): Promise<any> {
  opened.socket.send(JSON.stringify(message));
  return eventually(() => opened.messages.find((m) => m.id === message.id));
}

/** Where an upgrade that is refused ends: its HTTP status and error body. */
function refused(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}${path}`, { headers });
    socket.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    socket.on('open', () => reject(new Error(`${path} opened`)));
    socket.on('error', (error) => {
      if (!error.message.includes('Unexpected server response')) reject(error);
    });
  });
}

async function createComputer(key = server.key): Promise<string> {
  const created = await server.request('POST', '/computers', {}, { key });
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});

describe('a computer WebSocket', () => {
  it('runs the actions sent on it, answers each with its id, and streams the events', async () => {
    const id = await createComputer();
    const ws = await open(id);
    const navigated = await send(ws, {
      id: 'go',
      action: { type: 'navigate', url: `${fixtures.url}/actions.html` },
    });
    expect(navigated).toMatchObject({ type: 'action_result', id: 'go', status: 'success' });
    // Bare, as /execute takes it too, with a number for id.
    const clicked = await send(ws, { id: 7, type: 'click', x: 150, y: 150 });
    expect(clicked).toMatchObject({ type: 'action_result', id: 7, status: 'success' });
    expect((await pageState(server, id)).events.at(-1)).toMatch(
      /^click 150,150 left .* on target$/,
    );
    const typed = await send(ws, { id: 't', action: { type: 'type', text: 'over the socket' } });
    expect(typed.status).toBe('success');
    const shot = await send(ws, { id: 's', action: { type: 'screenshot' } });
    const image = await fetch(shot.result.screenshot_url);
    expect(image.headers.get('content-type')).toBe('image/png');
    // The computer's events came alongside: the click's request and answer, as /events sends them.
    const request = ws.messages.find(
      (m) => m.type === 'action_request' && m.action.type === 'click',
    );
    expect(request).toMatchObject({ computer_id: id, request_id: clicked.request_id });
    expect(ws.messages).toContainEqual(
      expect.objectContaining({ type: 'action_response', request_id: clicked.request_id }),
    );
    // When the computer ends, the socket says so and closes.
    const closed = new Promise<number>((resolve) => ws.socket.once('close', resolve));
    await server.request('DELETE', `/computers/${id}`);
    expect((await ws.next('status')).status).toBe('terminated');
    expect(await closed).toBe(1000);
  });

  it('answers bad input on the socket, which stays open', async () => {
    const id = await createComputer();
    const ws = await open(id);
    ws.socket.send('not json');
    const notJson = await ws.next('error');
    expect(notJson).toMatchObject({ code: 'invalid_request' });
    expect(notJson.message).toMatch(/one JSON object/);
    const badField = await send(ws, { id: 'b', action: { type: 'click', x: 'left' } });
    expect(badField).toMatchObject({ type: 'error', id: 'b', code: 'invalid_request' });
    expect(badField.param).toMatch(/^action\./);
    ws.socket.send(JSON.stringify({ id: { no: 1 }, action: { type: 'wait', ms: 10 } }));
    await eventually(() => ws.messages.find((m) => m.param === 'id'));
    expect(ws.messages.find((m) => m.param === 'id')).toMatchObject({
      type: 'error',
      code: 'invalid_request',
      message: 'id must be a string or a number',
    });
    // Larger than a message may be (10 MiB): the socket is closed, as the protocol says.
    const big = await open(id);
    const bigClosed = new Promise<number>((resolve) => big.socket.once('close', resolve));
    big.socket.send('x'.repeat(11 * 1024 * 1024));
    expect(await bigClosed).toBe(1009);
    const fine = await send(ws, { id: 'after', action: { type: 'wait', ms: 10 } });
    expect(fine).toMatchObject({ type: 'action_result', status: 'success' });
    ws.socket.close();
    await server.request('DELETE', `/computers/${id}`);
  });

  it('holds a gated action for a person like every route, naming the client', async () => {
    const id = await createComputer();
    await server.request('POST', `/computers/${id}/navigate`, {
      url: `${fixtures.url}/checkout.html`,
    });
    const policy = {
      id: 'payments',
      when: { action_types: ['click'], target: { name_pattern: '^pay' } },
      then: 'ask',
    };
    expect((await server.request('PUT', '/policies', [policy])).status).toBe(200);
    try {
      const ws = await open(id, server.key, { 'user-agent': 'my-agent/2.0' });
      ws.socket.send(JSON.stringify({ id: 'pay', action: { type: 'click', x: 100, y: 60 } }));
      const asked = await ws.next('approval_required');
      const approval = (await server.request('GET', `/approvals/${asked.approval_id}`)).body;
      expect(approval.requested_by).toBe(`my-agent/2.0 (key ${server.key.slice(0, 7)}…)`);
      expect(ws.messages.find((m) => m.id === 'pay')).toBeUndefined();
      await server.request('POST', `/approvals/${asked.approval_id}/deny`, { note: 'not today' });
      const answer = await eventually(() => ws.messages.find((m) => m.id === 'pay'));
      expect(answer).toMatchObject({ type: 'action_result', status: 'error' });
      expect(answer.error_message).toMatch(/not today/);
      ws.socket.close();
    } finally {
      await server.request('PUT', '/policies', []);
      await server.request('DELETE', `/computers/${id}`);
    }
  });

  it('is refused without a valid key, for another organization and a revoked key', async () => {
    const id = await createComputer();
    const path = `/computers/${id}/ws`;
    const none = await refused(path, {});
    expect(none).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const wrong = await refused(path, { authorization: 'Bearer sk_not_a_key_at_all_000' });
    expect(wrong.status).toBe(401);
    const other = server.core.keys.create('other-socket');
    const foreign = await refused(path, { authorization: `Bearer ${other.key}` });
    expect(foreign).toMatchObject({ status: 404, body: { code: 'not_found' } });
    // The other organization's own computer opens; revoked, the key's next message closes it.
    const theirs = await createComputer(other.key);
    const ws = await open(theirs, other.key);
    expect((await send(ws, { id: 1, type: 'wait', ms: 1 })).status).toBe('success');
    const closed = new Promise<number>((resolve) => ws.socket.once('close', resolve));
    server.core.keys.revoke(other.info.id);
    const after = await send(ws, { id: 2, type: 'wait', ms: 1 });
    expect(after).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(await closed).toBe(1008);
    await server.request('DELETE', `/computers/${id}`);
  });

  it('is cut off when its client stops reading, while a client that reads gets every event', async () => {
    const id = await createComputer();
    const reading = await open(id);
    const stalled = await open(id);
    stalled.socket.pause();
    const run = await server.request('POST', `/computers/${id}/exec/sync`, {
      command: PACED_FLOOD.command,
      max_output_length: 100,
    });
    expect(run.body.exit_code, run.text).toBe(0);
    const end = () =>
      reading.messages.find((m) => m.type === 'action_response' && m.exit_code !== undefined);
    await eventually(end, 30_000);
    const received = reading.messages
      .filter((m) => m.type === 'exec_output')
      .reduce((sum, m) => sum + Buffer.from(m.data as string, 'base64').length, 0);
    expect(received).toBe(PACED_FLOOD.bytes);

    const closed = new Promise<number>((resolve) => stalled.socket.once('close', resolve));
    stalled.socket.resume();
    expect(await closed).toBe(1006);
    expect(
      stalled.messages.find((m) => m.type === 'action_response' && m.exit_code !== undefined),
    ).toBeUndefined();
    reading.socket.close();
    await server.request('DELETE', `/computers/${id}`);
  });

  it('ends the socket of a client that stopped answering pings, and keeps one that answers', async () => {
    // A server that pings every 0.2 s (15 s by default).
    const heartbeatMs = 200;
    const pinging = await startTestServer({}, { sse: { heartbeatMs } });
    const main = server;
    server = pinging;
    try {
      const id = await createComputer();
      const answering = await open(id);
      const silent = await open(id, server.key, {}, false);
      const silentClosed = new Promise<number>((resolve) => silent.socket.once('close', resolve));
      expect(await silentClosed).toBe(1006);
      // Several heartbeats later, the client that answers its pings is still served.
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs * 4));
      expect(answering.socket.readyState).toBe(WebSocket.OPEN);
      expect((await send(answering, { id: 'still', type: 'wait', ms: 1 })).status).toBe('success');
      answering.socket.close();
    } finally {
      server = main;
      await pinging.close();
    }
  });

  it("tells the SDKs' plain GET of it how to open it", async () => {
    const id = await createComputer();
    const plain = await server.request('GET', `/computers/${id}/ws`, undefined, {
      headers: SDK_HEADERS.currentPython,
    });
    expect(plain.status).toBe(426);
    expect(plain.body).toMatchObject({ code: 'upgrade_required' });
    expect(plain.body.message).toMatch(/is a WebSocket/);
    const unknown = await server.request('GET', '/computers/comp_nobody/ws');
    expect(unknown.status).toBe(404);
    await server.request('DELETE', `/computers/${id}`);
  });
});

describe('examples/websocket', () => {
  it('actions.mjs clicks over the socket, reads the page, and sees the socket close', async () => {
    const example = join(import.meta.dirname, '..', '..', 'examples', 'websocket', 'actions.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [example], {
      env: { ...process.env, LIGHTCONE_BASE_URL: server.url, TZAFON_API_KEY: server.key },
      timeout: 60_000,
    });
    expect(stdout).toContain('click: success');
    expect(stdout).toContain('page says: clicked over the WebSocket');
    expect(stdout).toMatch(/socket closed with 1000 after \d+ events/);
    expect(server.core.computers.list('local')).toEqual([]);
  });
});
