import { connect } from 'node:net';
import { UNPOOLED, CLICK_AT, type Bench } from '../bench.js';
import { BenchClient } from '../client.js';
import { progress } from '../report.js';
import { interleave, timed } from '../sampling.js';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';
import {
  startPlaywrightServer,
  type PlaywrightServer,
} from '../../test/helpers/remote-browsers.js';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.js';
import type { BrowserBackendSettings } from '../../src/shared/settings.js';

/** How long the 30 computers run their mixed actions. */
const MIXED_SECONDS = 60;
const MIXED_COMPUTERS = 30;

/**
 * Remote browser backends (docs/API.md §17), against this machine's Chromium in the same run:
 * create on a `playwright run-server` backend against a local create that does not come from
 * the warm pool; a click on a remote computer against a local one, allowed the backend's
 * network round trip; and 30 computers across local + two servers doing mixed actions for 60 s.
 */
export async function benchRemoteBackends({ client, url, report }: Bench): Promise<void> {
  const servers = [await startPlaywrightServer(), await startPlaywrightServer()];
  let remote: TestServer | undefined;
  let mixed: TestServer | undefined;
  try {
    remote = await serve([backend('pw-a', servers[0]!, 40)]);
    const remoteClient = new BenchClient(remote.url, remote.key);
    await createAndAct(client, remoteClient, url, servers[0]!, report);
    await remote.close();
    remote = undefined;

    mixed = await serve([
      { name: 'local', type: 'local', max_computers: 10 },
      backend('pw-a', servers[0]!, 10),
      backend('pw-b', servers[1]!, 10),
    ]);
    await mixedLoad(mixed, url, report);
  } finally {
    await remote?.close();
    await mixed?.close();
    await Promise.all(servers.map((server) => server.close()));
  }
}

const backend = (name: string, server: PlaywrightServer, max: number): BrowserBackendSettings => ({
  name,
  type: 'playwright',
  url: server.url,
  max_computers: max,
  // The Chromium local computers run in (the headless shell where installed): the rows compare
  // the backends, not two browsers.
  executable_path: findChromium(null, process.env, { headless: true }),
});

async function serve(backends: BrowserBackendSettings[]): Promise<TestServer> {
  const server = await startTestServer({
    browser: { warm_pool: 0, backends },
    limits: { browsers_per_org: 40, requests_per_second: 100_000, burst: 100_000 },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listed = (await server.request('GET', '/backends')).body as Array<{ status: string }>;
    if (listed.every((entry) => entry.status === 'up')) return server;
    if (Date.now() > deadline) throw new Error('the backends did not come up');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function createAndAct(
  local: BenchClient,
  remote: BenchClient,
  url: string,
  server: PlaywrightServer,
  report: Bench['report'],
): Promise<void> {
  // The remote server's Chromium starts with the first computer: that one is not measured.
  const first = await remote.create();
  const [remoteCreate, localCreate] = await interleave(2, 15, [
    async () => {
      const { id, ms } = await remote.create();
      await remote.request('DELETE', `/computers/${id}`);
      return ms;
    },
    async () => {
      const { id, ms } = await local.create(UNPOOLED);
      await local.request('DELETE', `/computers/${id}`);
      return ms;
    },
  ]);
  report.timing(
    'POST /computers on a Playwright server',
    { api: remoteCreate, raw: localCreate },
    { kind: 'ratio', factor: 1.5 },
    'raw = a local create without the warm pool (display 1280×719); run-server on 127.0.0.1',
  );

  const onLocal = await local.create();
  await local.request('POST', `/computers/${onLocal.id}/navigate`, { url }, 'action');
  await remote.request('POST', `/computers/${first.id}/navigate`, { url }, 'action');
  const click = (api: BenchClient, id: string) => () =>
    api.timed('POST', `/computers/${id}/click`, CLICK_AT, 'action');
  const [remoteClick, localClick, rtt] = await interleave(10, 100, [
    click(remote, first.id),
    click(local, onLocal.id),
    () => roundTrip(server.port),
  ]);
  const rttP50 = [...rtt!].sort((a, b) => a - b)[Math.floor(rtt!.length / 2)]!;
  report.timing(
    'click on a Playwright-server computer',
    { api: remoteClick, raw: localClick },
    { kind: 'ratio', factor: 1.3, plusMs: Math.round(rttP50 * 100) / 100 },
    `raw = the same click on a local computer; + the backend's round trip (TCP connect, p50 ${rttP50.toFixed(2)} ms)`,
  );
  await local.request('DELETE', `/computers/${onLocal.id}`);
  await remote.request('DELETE', `/computers/${first.id}`);
}

/** One network round trip to the backend: a TCP handshake to its port. */
function roundTrip(port: number): Promise<number> {
  return timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => {
          socket.destroy();
          resolve();
        });
        socket.once('error', reject);
      }),
  );
}

/** 30 computers spread over three backends, each acting in a loop: every answer must succeed. */
async function mixedLoad(server: TestServer, url: string, report: Bench['report']) {
  const client = new BenchClient(server.url, server.key);
  const ids: string[] = [];
  for (let i = 0; i < MIXED_COMPUTERS; i++) ids.push((await client.create()).id);
  const placed = (await server.request('GET', '/backends')).body as Array<{
    name: string;
    running: number;
  }>;
  progress(`mixed load on ${placed.map((entry) => `${entry.name} ${entry.running}`).join(', ')}`);
  const actions = [
    () => ({ path: 'navigate', body: { url } }),
    () => ({ path: 'click', body: CLICK_AT }),
    () => ({ path: 'click', body: { x: 500, y: 150 } }),
    () => ({ path: 'type', body: { text: 'mixed load' } }),
    () => ({ path: 'scroll', body: { x: 300, y: 300, dx: 0, dy: 200 } }),
    () => ({ path: 'screenshot', body: {} }),
    () => ({ path: 'html', body: {} }),
  ];
  const until = Date.now() + MIXED_SECONDS * 1000;
  const samples: number[] = [];
  const errors: string[] = [];
  await Promise.all(
    ids.map(async (id, index) => {
      for (let step = index; Date.now() < until; step++) {
        const { path, body } = actions[step % actions.length]!();
        try {
          samples.push(await client.timed('POST', `/computers/${id}/${path}`, body, 'action'));
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
    }),
  );
  await Promise.all(ids.map((id) => client.request('DELETE', `/computers/${id}`)));
  const sorted = [...samples].sort((a, b) => a - b);
  const p = (q: number) => Math.round(sorted[Math.floor(sorted.length * q)]! * 100) / 100;
  report.add({
    name: `${MIXED_COMPUTERS} computers on local + 2 Playwright servers, mixed actions for ${MIXED_SECONDS} s`,
    api_p50_ms: p(0.5),
    raw_p50_ms: null,
    ratio: null,
    target: 'zero errors',
    pass: errors.length === 0,
    samples: samples.length + errors.length,
    api_p90_ms: p(0.9),
    note: `${samples.length} actions, ${errors.length} errors${errors.length ? `: ${errors[0]}` : ''}; placed ${placed.map((entry) => `${entry.name} ${entry.running}`).join(', ')}`,
  });
  progress(`mixed load: ${samples.length} actions, ${errors.length} errors`);
}
