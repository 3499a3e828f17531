import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyByte, everyFile, type Part } from '../helpers/every-byte.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import type { FakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The vault (docs/API.md §15): a value goes in once, is typed wherever `{{secret:NAME}}` stands,
 * on every path, and is found nowhere else: not in an answer, an event, a recording, a bundle,
 * a model request, nor in plain text anywhere under the data dir.
 */

const CANARY = 'Canary-Vault-5e1f2a9b';
/** checkout.html: the user name field, whose value the page shows in #typed. */
const USER = { x: 140, y: 135 };

let server: TestServer;
let fixtures: FixtureServer;
let fake: FakeChatCompletions;

beforeAll(async () => {
  [fixtures, fake] = await Promise.all([startFixtureServer(), startFakeChatCompletions()]);
  server = await startTestServer({
    models: {
      default: 'vlm',
      providers: { vlm: { provider: 'openai-compatible', base_url: fake.url, model: 'fake-vlm' } },
    },
    recording: { enabled: true },
  });
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close(), fake?.close()]);
});

const post = (path: string, body: unknown, key?: string) =>
  server.request('POST', path, body, key ? { key } : {});

async function newComputer(): Promise<string> {
  const id = (await post('/computers', {})).body.id as string;
  const opened = await post(`/computers/${id}/navigate`, { url: `${fixtures.url}/checkout.html` });
  expect(opened.body.status, opened.text).toBe('success');
  return id;
}

/** What the page shows was typed into its user name field. */
async function typed(id: string): Promise<string> {
  const html = (await post(`/computers/${id}/html`, {})).body.result.html_content as string;
  return /<pre id="typed">([^<]*)<\/pre>/.exec(html)![1]!;
}

describe('secrets', () => {
  it('are stored per organization and read back by name only; bad ones are a 4xx', async () => {
    const created = await post('/secrets', { name: 'SITE_PW', value: 'pw-for-the-site' });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({ name: 'SITE_PW', created_at: expect.any(String) });
    const listed = await server.request('GET', '/secrets');
    expect(listed.body).toEqual([{ name: 'SITE_PW', created_at: created.body.created_at }]);
    expect(listed.text + created.text).not.toContain('pw-for-the-site');

    const badName = await post('/secrets', { name: 'has space', value: 'long enough' });
    expect(badName.status).toBe(400);
    expect(badName.body).toMatchObject({ param: 'name' });
    const short = await post('/secrets', { name: 'PIN', value: '123' });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('shorter than 4 characters');

    const other = server.core.keys.create('other').key;
    expect((await server.request('GET', '/secrets', undefined, { key: other })).body).toEqual([]);
    const theirs = await server.request('DELETE', '/secrets/SITE_PW', undefined, { key: other });
    expect(theirs.status).toBe(404);

    expect((await server.request('DELETE', '/secrets/SITE_PW')).status).toBe(204);
    expect((await server.request('GET', '/secrets')).body).toEqual([]);
    expect((await server.request('DELETE', '/secrets/SITE_PW')).status).toBe(404);
  });

  it('an unknown name is a 400 naming it, before anything is typed', async () => {
    const id = await newComputer();
    await post(`/computers/${id}/click`, USER);
    const single = await post(`/computers/${id}/type`, { text: 'a {{secret:NOPE}}' });
    expect(single.status).toBe(400);
    expect(single.body).toMatchObject({ param: 'text' });
    expect(single.body.message).toContain('unknown secret "NOPE"');
    const batch = await post(`/computers/${id}/batch`, {
      actions: [{ type: 'type', text: '{{secret:NOPE}}' }],
    });
    expect(batch.body.results[0]).toMatchObject({ status: 'error' });
    expect(batch.body.results[0].error_message).toContain('unknown secret "NOPE"');
    expect(await typed(id)).toBe('');
    // Another organization's secret is as unknown.
    const other = server.core.keys.create('other-2').key;
    await post('/secrets', { name: 'THEIRS', value: 'their-value-1' }, other);
    const foreign = await post(`/computers/${id}/type`, { text: '{{secret:THEIRS}}' });
    expect(foreign.status).toBe(400);
    await server.request('DELETE', `/computers/${id}`);
  });

  it('types the value on every path and leaves it in no answer, event, recording, bundle or model request', async () => {
    await post('/secrets', { name: 'CANARY', value: CANARY });
    const id = await newComputer();
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    const answers: string[] = [];
    const act = async (path: string, body: unknown) => {
      const answer = await post(`/computers/${id}/${path}`, body);
      answers.push(answer.text);
      return answer;
    };

    await act('click', USER);
    expect((await act('type', { text: 'a={{secret:CANARY}};' })).body.status).toBe('success');
    const executed = await act('execute', {
      action: { type: 'type', text: 'b={{secret:CANARY}};' },
    });
    expect(executed.body.status, executed.text).toBe('success');
    const batch = await act('batch', {
      actions: [{ type: 'type', text: 'c={{secret:CANARY}};' }, { type: 'get_html_content' }],
    });
    expect(batch.body.results.map((r: { status: string }) => r.status)).toEqual([
      'success',
      'success',
    ]);
    // An agent task: the model writes the placeholder, never the value.
    fake.reply(
      {
        json: chatCompletion({
          tool_calls: [call({ action: 'type', text: 'd={{secret:CANARY}};' })],
        }),
      },
      { json: chatCompletion({ content: 'Signed in.' }) },
    );
    const task = await post('/agent/tasks', { instruction: 'sign in', computer_id: id });
    expect(task.status, task.text).toBe(200);
    const taskId = task.body.task_id as string;
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'completed',
      20_000,
    );

    // The page got the value each time; the answer telling so shows it redacted.
    const shown = await typed(id);
    expect(shown).toBe('a=[redacted];b=[redacted];c=[redacted];d=[redacted];');
    answers.push(shown);

    await server.request('DELETE', `/computers/${id}`);
    await eventually(
      async () =>
        (await server.request('GET', `/computers/${id}/recording`)).body.status === 'complete',
      30_000,
    );
    const streamed = (await events.collect(500)).map((event) => event.raw);
    events.close();
    expect(streamed.join('\n')).toContain('{{secret:CANARY}}');

    const bundle = await fetch(`${server.url}/agent/tasks/${taskId}/bundle`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    expect(bundle.status).toBe(200);
    const parts: Part[] = [
      { name: 'answers', bytes: Buffer.from(answers.join('\n')) },
      { name: 'computer events', bytes: Buffer.from(streamed.join('\n')) },
      { name: 'model requests', bytes: Buffer.from(JSON.stringify(fake.requests)) },
      ...(await everyByte(Buffer.from(await bundle.arrayBuffer()), 'the bundle')),
      ...(await everyFile(server.dataDir)),
    ];
    expect(fake.requests.length).toBe(2);
    expect(parts.length).toBeGreaterThan(10);
    const found = parts
      .filter(({ bytes }) => [CANARY, encodeURIComponent(CANARY)].some((s) => bytes.includes(s)))
      .map(({ name }) => name);
    expect(found).toEqual([]);
  });
});

function call(args: Record<string, unknown>) {
  return {
    id: 'c1',
    type: 'function',
    function: { name: 'computer', arguments: JSON.stringify(args) },
  };
}
