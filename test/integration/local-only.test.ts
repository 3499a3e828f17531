import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/shared/tasks.js';
import type { UsageList } from '../../src/shared/usage.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * models.local_only (docs/API.md §15): a provider whose base_url is not a loopback address is
 * refused before any connection. The providers here point at 192.0.2.1 (TEST-NET-1, never
 * routed) and at api.openai.com; every connect this process makes is watched, so a refusal that
 * came after a connection attempt would show, and nothing is ever sent to those addresses.
 */

type Connect = { host: string; port: number };
const connects: Connect[] = [];
const original = Object.getOwnPropertyDescriptor(Socket.prototype, 'connect')!.value as (
  this: Socket,
  ...args: unknown[]
) => Socket;
let server: TestServer;
let near: FakeUpstream;

const BLOCKED = /^model "(far|cloud)" is refused: models\.local_only is on/;

beforeAll(async () => {
  // Watching, never changing: each connect goes on as asked.
  Socket.prototype.connect = function watched(this: Socket, ...args: unknown[]) {
    // net.connect hands its arguments on normalized, as one array.
    const [first, second] = (Array.isArray(args[0]) ? args[0] : args) as [unknown, unknown];
    const options =
      typeof first === 'object' && first !== null
        ? (first as { host?: string; port?: number })
        : { port: Number(first), host: typeof second === 'string' ? second : 'localhost' };
    connects.push({ host: options.host ?? 'localhost', port: Number(options.port) });
    return original.apply(this, args);
  } as Socket['connect'];
  near = await startFakeChatCompletions();
  server = await startTestServer({
    models: {
      default: 'near',
      providers: {
        near: { provider: 'openai-compatible', base_url: near.url },
        far: { provider: 'openai-compatible', base_url: 'http://192.0.2.1:8000/v1' },
        cloud: { provider: 'openai', api_key: 'sk-never-sent' },
      },
    },
    recording: { enabled: false },
  });
  // Through the settings route, as the window sets it (a test server's own settings are flags,
  // which a PATCH would not override).
  const on = await server.request('PATCH', '/settings', { models: { local_only: true } });
  expect(on.body.settings.models.local_only, on.text).toBe(true);
});
afterAll(async () => {
  Socket.prototype.connect = original as Socket['connect'];
  await server?.close();
  await near?.close();
});

const respond = (model: string) =>
  server.request('POST', '/v1/responses', { model, input: 'Hello' });
const toTheOutside = () =>
  connects.filter(({ host }) => !['127.0.0.1', 'localhost', '::1'].includes(host));

describe('models.local_only', () => {
  it('a loopback provider still answers, and its connection is seen', async () => {
    connects.length = 0;
    near.reply({ json: chatCompletion({ content: 'Hi' }) });
    const answer = await respond('near');
    expect(answer.body.status, answer.text).toBe('completed');
    const port = Number(new URL(near.url).port);
    expect(connects.some((connect) => connect.port === port)).toBe(true);
  });

  it('refuses a non-loopback provider with model_blocked before any connection', async () => {
    connects.length = 0;
    for (const [model, host] of [
      ['far', '192.0.2.1'],
      ['cloud', 'api.openai.com'],
    ] as const) {
      const answer = await respond(model);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: 'failed', error: { code: 'model_blocked' } });
      expect(answer.body.error.message).toMatch(BLOCKED);
      expect(answer.body.error.message).toContain(host);
      expect(answer.body.error.message).toContain(`models.providers.${model}.base_url`);
      const rows = (await server.request('GET', `/v1/usage?response_id=${answer.body.id}`))
        .body as UsageList;
      expect(rows.data).toMatchObject([{ error: 'model_blocked', input_tokens: 0, model }]);
    }
    const chat = await server.request('POST', '/v1/chat/completions', {
      model: 'far',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(chat.status).toBe(403);
    expect(chat.body).toMatchObject({ code: 'model_blocked' });
    expect(chat.body.message).toMatch(BLOCKED);
    expect(toTheOutside()).toEqual([]);
    expect(connects.filter(({ port }) => port === 8000 || port === 443)).toEqual([]);
  });

  it('an agent task on a non-loopback model fails saying why, without connecting', async () => {
    connects.length = 0;
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Open the page',
      model: 'far',
    });
    expect(started.status, started.text).toBe(200);
    const task = await eventually(async () => {
      const current = (await server.request('GET', `/agent/tasks/${started.body.task_id}`))
        .body as Task;
      return current.exit_code !== null && current;
    }, 20_000);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/model "far" is refused: models\.local_only is on/);
    expect(toTheOutside()).toEqual([]);
  });

  it('lists its models without asking any provider, and turned off lets a provider be called', async () => {
    connects.length = 0;
    const models = await server.request('GET', '/v1/models');
    expect(models.body.data.map((model: { id: string }) => model.id).sort()).toEqual([
      'cloud',
      'far',
      'near',
    ]);
    expect(toTheOutside()).toEqual([]);
    const off = await server.request('PATCH', '/settings', { models: { local_only: false } });
    expect(off.status, off.text).toBe(200);
    expect(off.body.settings.models.local_only).toBe(false);
    near.reply({ json: chatCompletion({ content: 'Still here' }) });
    expect((await respond('near')).body.status).toBe('completed');
  });
});
