import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/shared/approvals.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The MCP server over Streamable HTTP (docs/API.md, "MCP"): the official SDK's client against
 * the real server, real Chromium and the fixture pages; effects are read back over REST.
 */

let server: TestServer;
let fixtures: FixtureServer;
const clients: Client[] = [];

const PAY = { x: 100, y: 60 };
const USER = { x: 140, y: 135 };

const dir = mkdtempSync(join(tmpdir(), 'benchtop-mcp-scripts-'));
const waiter = join(dir, 'waiter.json');
writeFileSync(
  waiter,
  JSON.stringify({
    turns: [{ output: [{ type: 'computer_call', action: { type: 'wait', ms: 55_000 } }] }],
  }),
);

beforeAll(async () => {
  [server, fixtures] = await Promise.all([
    startTestServer({
      limits: { browsers_per_org: 12 },
      models: {
        default: 'waiter',
        providers: { waiter: { provider: 'scripted', script: waiter } },
      },
    }),
    startFixtureServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await server.request('PUT', '/policies', []);
  for (const computer of (await server.request('GET', '/computers')).body) {
    await server.request('DELETE', `/computers/${computer.id}`);
  }
});

async function connect(key = server.key): Promise<Client> {
  const client = new Client({ name: 'benchtop-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
/** A tool call that must succeed; its text. */
const ok = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const result = await call(client, name, args);
  expect(result.isError, textOf(result)).toBeFalsy();
  return textOf(result);
};
const createdId = (text: string) => /computer (cmp_\S+|\S+);/.exec(text)![1]!;

/** What the checkout page says, read over REST. */
const pageOf = async (id: string) =>
  (await server.request('POST', `/computers/${id}/html`, {})).body.result.html_content as string;
const statusOf = async (id: string) => /<p id="status">([^<]*)<\/p>/.exec(await pageOf(id))![1];

describe('MCP over Streamable HTTP', () => {
  it('lists the tools; creates a computer, navigates, clicks, reads the HTML and the screen', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'cancel_task',
        'click',
        'create_computer',
        'delete_computer',
        'double_click',
        'drag',
        'exec',
        'html',
        'key',
        'list_computers',
        'message_task',
        'navigate',
        'pause_task',
        'resume_task',
        'screenshot',
        'scroll',
        'start_task',
        'tabs',
        'task_status',
        'type',
        'use_computer',
      ].sort(),
    );
    for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(20);

    const before = await call(client, 'click', PAY);
    expect(before.isError).toBe(true);
    expect(textOf(before)).toMatch(/call create_computer/);

    const id = createdId(await ok(client, 'create_computer', { kind: 'browser' }));
    expect(await ok(client, 'list_computers')).toContain(id);
    await ok(client, 'navigate', { url: `${fixtures.url}/checkout.html` });
    await ok(client, 'click', PAY);
    expect(await ok(client, 'html')).toContain('<p id="status">paid</p>');
    expect(await statusOf(id)).toBe('paid');

    const shot = await call(client, 'screenshot');
    const image = shot.content.find((part) => part.type === 'image');
    expect(image?.mimeType).toBe('image/png');
    const meta = await sharp(Buffer.from(image!.data, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1280, 720]);
    expect(textOf(shot)).toContain('1280x720');

    const tabs = await ok(client, 'tabs', { action: 'list' });
    expect(tabs).toContain('checkout.html');
    expect(textOf(await call(client, 'tabs', { action: 'close' }))).toMatch(/tab_id is required/);

    const exec = await ok(client, 'exec', { command: 'echo from-exec; exit 3' });
    expect(exec).toMatch(/exited with 3/);
    expect(exec).toContain('"stdout": "from-exec\\n"');

    await ok(client, 'delete_computer');
    expect(textOf(await call(client, 'html'))).toMatch(/no current computer/);
    const ended = await server.request('GET', `/computers/${id}`);
    expect(ended.body.ended_by).toBe(
      `MCP client benchtop-test 1.0.0 (key ${server.key.slice(0, 7)}…)`,
    );
  });

  // Eight contexts created at once on two cores shared with other suites take their time.
  it('eight clients at once each act on their own computer only', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => connect()));
    const ids = await Promise.all(
      sessions.map(async (client, index) => {
        const id = createdId(await ok(client, 'create_computer', {}));
        await ok(client, 'navigate', { url: `${fixtures.url}/checkout.html` });
        await ok(client, 'click', USER);
        await ok(client, 'type', { text: `marker-${index}-end` });
        return id;
      }),
    );
    expect(new Set(ids).size).toBe(8);
    for (const [index, id] of ids.entries()) {
      const typed = /<pre id="typed">([^<]*)<\/pre>/.exec(await pageOf(id))![1];
      expect(typed).toBe(`marker-${index}-end`);
    }
  }, 120_000);

  it('needs a key; another organization cannot use a computer nor a session it does not own', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(initialize),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { code: string }).code).toBe('unauthorized');
    expect((await post({ authorization: 'Bearer sk_wrong_aaaaaaaaaaaaaaaaaaaa' })).status).toBe(
      401,
    );

    const owner = await connect();
    const id = createdId(await ok(owner, 'create_computer', {}));
    const other = await connect(server.core.keys.create('other').key);
    const refused = await call(other, 'use_computer', { computer_id: id });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/no computer|not found/i);
    expect(await ok(other, 'list_computers')).not.toContain(id);
    expect((await call(other, 'delete_computer', { computer_id: id })).isError).toBe(true);

    // The owner's session id, sent with the other organization's key, is unknown.
    const sessionId = (owner.transport as StreamableHTTPClientTransport).sessionId!;
    const hijack = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${server.core.keys.create('other').key}`,
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(404);

    // DELETE closes the session: its id is unknown afterwards.
    await (owner.transport as StreamableHTTPClientTransport).terminateSession();
    const closed = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${server.key}`,
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    expect(closed.status).toBe(404);
  });
});

describe('approvals', () => {
  const pending = (id: string): Promise<Approval> =>
    eventually(async () => {
      const list = await server.request<Approval[]>('GET', '/approvals?status=pending');
      return list.body.find((approval) => approval.computer_id === id);
    });

  it('a click a policy holds waits for the decision: approved, it clicks; denied, it does not', async () => {
    const client = await connect();
    const told: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      told.push(String(notification.params.data));
    });
    const id = createdId(await ok(client, 'create_computer', {}));
    await ok(client, 'navigate', { url: `${fixtures.url}/checkout.html` });
    const policy = { id: 'clicks', when: { action_types: ['click'] }, then: 'ask' };
    expect((await server.request('PUT', '/policies', [policy])).status).toBe(200);

    const approved = call(client, 'click', PAY);
    const first = await pending(id);
    // The queue tells this client from the others: its name, version and key.
    expect(first.requested_by).toBe(
      `MCP client benchtop-test 1.0.0 (key ${server.key.slice(0, 7)}…)`,
    );
    expect(await statusOf(id)).toBe('nothing yet');
    await eventually(() => told.some((line) => line.includes(first.id)));
    await server.request('POST', `/approvals/${first.id}/approve`, { note: 'go ahead' });
    const done = await approved;
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(textOf(done)).toMatch(/^Approved by a person \(note: go ahead\)\. Clicked/);
    expect(await statusOf(id)).toBe('paid');

    // Asked for progress, the client hears of the wait that way too.
    const progress: string[] = [];
    const denied = client.callTool({ name: 'click', arguments: PAY }, undefined, {
      onprogress: ({ message }) => progress.push(message ?? ''),
    }) as Promise<CallToolResult>;
    const second = await pending(id);
    await eventually(() => progress.some((line) => line.includes(second.id)));
    await server.request('POST', `/approvals/${second.id}/deny`, { note: 'not twice' });
    const refused = await denied;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('denied: not twice');
    expect(await statusOf(id)).toBe('paid');
  });
});

describe('task tools', () => {
  it('start a task, read its status, pause, resume, message and cancel it', async () => {
    const client = await connect();
    const started = await ok(client, 'start_task', { instruction: 'wait a while' });
    const taskId = /Started task (\S+) on/.exec(started)![1]!;
    expect(await ok(client, 'task_status', { task_id: taskId })).toMatch(/is running/);
    expect(await ok(client, 'pause_task', { task_id: taskId })).toMatch(/now paused/);
    expect((await server.request('GET', `/agent/tasks/${taskId}`)).body.status).toBe('paused');
    expect(await ok(client, 'resume_task', { task_id: taskId })).toMatch(/now running/);
    expect(await ok(client, 'message_task', { task_id: taskId, message: 'hurry' })).toMatch(
      /Message sent/,
    );
    expect(await ok(client, 'cancel_task', { task_id: taskId })).toMatch(/now cancelled/);
    await eventually(async () =>
      /is cancelled/.test(await ok(client, 'task_status', { task_id: taskId })),
    );
    // Its timeline names the MCP client at each turn it took.
    const named = `MCP client benchtop-test 1.0.0 (key ${server.key.slice(0, 7)}…)`;
    const reader = await SseReader.open(`${server.url}/agent/tasks/${taskId}/events`, server.key);
    const steered = (await reader.all()).map(
      (event) => event.data as { type: string; by?: string },
    );
    const by = Object.fromEntries(steered.filter((e) => e.by).map((e) => [e.type, e.by]));
    expect(by).toEqual({
      paused: named,
      resumed: named,
      user_message: named,
      cancelled: named,
    });

    const other = await connect(server.core.keys.create('other').key);
    expect((await call(other, 'task_status', { task_id: taskId })).isError).toBe(true);
    const bad = await call(client, 'pause_task', { task_id: taskId });
    expect(bad.isError).toBe(true);
  });
});
