import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readZip } from '../helpers/bundle-fixture.js';
import { everyByte, everyFile, type Part } from '../helpers/every-byte.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { startHttpProxy, type HttpProxy } from '../helpers/http-proxy.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * No recording or bundle holds an API key, a provider key or a proxy password (docs/API.md §13),
 * even when an agent types them, a page is opened with one in its URL, and the proxy is changed
 * to a URL carrying a password.
 */

const PROVIDER_KEY = 'prov-Secret-7f3b9c2e1d4a6b8c';
const PROXY_PASSWORD = 'proxyPass-9d8c7b6a';
const scratch = mkdtempSync(join(tmpdir(), 'benchtop-secrets-'));
let server: TestServer;
let fixtures: FixtureServer;
let proxy: HttpProxy;

beforeAll(async () => {
  [fixtures, proxy] = await Promise.all([
    startFixtureServer(),
    startHttpProxy({ username: 'agent', password: PROXY_PASSWORD }),
  ]);
  const proxyUrl = proxy.url.replace('http://', `http://agent:${PROXY_PASSWORD}@`);
  const script = join(scratch, 'typist.json');
  // Filled in once the server's key is known (the agent types it).
  server = await startTestServer({
    proxy: { advanced_proxy_url: proxyUrl },
    models: {
      default: 'typist',
      providers: {
        typist: { provider: 'scripted', script },
        // Never called: its key is a secret the settings hold.
        upstream: { provider: 'openai', api_key: PROVIDER_KEY, base_url: 'http://127.0.0.1:9/v1' },
      },
    },
  });
  const turn = (action: Record<string, unknown>) => ({
    output: [
      { type: 'reasoning', text: `next I will ${String(action.type)} with ${server.key}` },
      { type: 'computer_call', action },
    ],
  });
  writeFileSync(
    script,
    JSON.stringify({
      turns: [
        turn({ type: 'click', x: 250, y: 260 }),
        turn({ type: 'type', text: `${server.key} ${PROVIDER_KEY} ${PROXY_PASSWORD}` }),
        { output: [{ type: 'message', text: `done; the key was ${PROVIDER_KEY}` }] },
      ],
    }),
  );
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close(), proxy?.close()]);
  rmSync(scratch, { recursive: true, force: true });
});

function expectNoSecret(parts: Part[], secrets: string[]): void {
  const found = parts.flatMap(({ name, bytes }) =>
    secrets.filter((secret) => bytes.includes(secret)).map((secret) => `${name} holds ${secret}`),
  );
  expect(found).toEqual([]);
}

it('plants each secret where an agent and a page would put it; none is in any byte of the recording or the bundle', async () => {
  const secrets = [server.key, PROVIDER_KEY, PROXY_PASSWORD];
  const computer = await server.request('POST', '/computers', { use_advanced_proxy: true });
  expect(computer.status, computer.text).toBe(200);
  const id = computer.body.id as string;
  const act = (action: Record<string, unknown>) =>
    server.request('POST', `/computers/${id}/execute`, { action });
  // Through the authenticating proxy, with the API key in the URL.
  const opened = await act({
    type: 'navigate',
    url: `${fixtures.url}/recorded.html?key=${server.key}`,
  });
  expect(opened.body.status, opened.text).toBe('success');
  expect(proxy.log.some((line) => line.includes('recorded.js'))).toBe(true);
  // A file the browser downloads goes into the bundle as it is.
  await act({ type: 'navigate', url: `${fixtures.url}/invoice.csv` });
  await eventually(async () => {
    const listed = await server.request('GET', `/computers/${id}/downloads`);
    return (listed.body.data as Array<{ name: string }>).some((f) => f.name === 'invoice.csv');
  });
  const started = await server.request('POST', '/agent/tasks', {
    instruction: `sign in with ${PROVIDER_KEY}`,
    computer_id: id,
  });
  expect(started.status, started.text).toBe(200);
  const taskId = started.body.task_id as string;
  const reader = await SseReader.open(`${server.url}/agent/tasks/${taskId}/events`, server.key);
  for (let event = await reader.next(); event; event = await reader.next()) {
    if ((event.data as { type: string }).type === 'completed') break;
  }
  reader.close();
  expect((await act({ type: 'get_html_content' })).body.result.html_content).toContain('recorded');
  await act({ type: 'change_proxy', proxy_url: `http://agent:${PROXY_PASSWORD}@127.0.0.1:9` });
  await server.request('DELETE', `/computers/${id}`);

  const bundle = await fetch(`${server.url}/agent/tasks/${taskId}/bundle`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  expect(bundle.status).toBe(200);
  const zip = Buffer.from(await bundle.arrayBuffer());
  const entries = await readZip(zip);
  // The bundle holds what the secrets would have been in: typed text, model calls, requests.
  expect([...entries.keys()]).toEqual(
    expect.arrayContaining([
      'index.html',
      'task.json',
      'computer-events.ndjson',
      'recording.har',
      'trace.zip',
    ]),
  );
  expect([...entries.keys()].some((name) => name.startsWith('model/'))).toBe(true);
  expect(entries.get('computer-events.ndjson')!.data.toString()).toContain('[redacted]');
  expect(entries.get('downloads/invoice.csv')?.data).toEqual(
    readFileSync(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv')),
  );
  expectNoSecret(await everyByte(zip, 'the bundle'), secrets);
  const files = await everyFile(join(server.dataDir, 'recordings', id));
  expect(files.length).toBeGreaterThan(3);
  expectNoSecret(files, secrets);
});
