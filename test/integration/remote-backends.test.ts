import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fromBuffer, type Entry } from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveSettings } from '../../src/main/core/config.js';
import { writeStoredSettings } from '../../src/main/core/store/settings-store.js';
import type { Backend } from '../../src/shared/backends.js';
import type { Computer } from '../../src/shared/computers.js';
import type { BrowserBackendSettings } from '../../src/shared/settings.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { pageState, visitLoginPage } from '../helpers/page-state.js';
import {
  chromiumPath,
  startPlaywrightServer,
  startSeleniumGrid,
  type PlaywrightServer,
  type SeleniumGrid,
} from '../helpers/remote-browsers.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Browser computers on remote engines (docs/API.md §17): two `playwright run-server` processes
 * and a Selenium Grid 4 hub with one node, all real, on 127.0.0.1 ports of their own.
 */

/** Generous: two cores shared with the rest of the suite, and Java. */
const SLOW = 120_000;

let pwA: PlaywrightServer;
let pwB: PlaywrightServer;
let grid: SeleniumGrid;
let fixtures: FixtureServer;
/** A page that never answers: a navigation to it is under way when a backend is killed. */
let hanging: Server;
let hangingUrl: string;
let hangingRequests = 0;
const servers: TestServer[] = [];
const dataDirs: string[] = [];

const playwright = (name: string, server: PlaywrightServer, max = 4): BrowserBackendSettings => ({
  name,
  type: 'playwright',
  url: server.url,
  max_computers: max,
  executable_path: chromiumPath(),
});
const selenium = (max = 3): BrowserBackendSettings => ({
  name: 'grid',
  type: 'selenium',
  url: grid.url,
  max_computers: max,
});

async function serve(backends: BrowserBackendSettings[], dataDir?: string): Promise<TestServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'benchtop-backends-'));
  if (!dataDir) dataDirs.push(dir);
  const server = await startTestServer({ browser: { warm_pool: 0, backends } }, { dataDir: dir });
  servers.push(server);
  // Remote backends are down until their first health check answers.
  await eventually(async () => {
    const listed = (await server.request<Backend[]>('GET', '/backends')).body;
    return listed.every((backend) => backend.status === 'up');
  }, SLOW);
  return server;
}

async function create(server: TestServer, body: Record<string, unknown> = {}): Promise<Computer> {
  const response = await server.request<Computer>('POST', '/computers', body);
  expect(response.status, response.text).toBe(200);
  return response.body;
}

const act = (server: TestServer, id: string, path: string, body: unknown = {}) =>
  server.request('POST', `/computers/${id}/${path}`, body);

const backends = async (server: TestServer) =>
  (await server.request<Backend[]>('GET', '/backends')).body;

/** What placement must pick: the up backend with the most free capacity, first listed among equals. */
function mostFree(listed: Backend[]): string {
  let best: Backend | undefined;
  for (const backend of listed) {
    if (backend.status !== 'up') continue;
    const free = backend.capacity - backend.running;
    if (free > 0 && (!best || free > best.capacity - best.running)) best = backend;
  }
  return best!.name;
}

function zipNames(bytes: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) =>
    fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const names: string[] = [];
      zip.on('entry', (entry: Entry) => {
        names.push(entry.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    }),
  );
}

async function download(server: TestServer, path: string): Promise<Buffer> {
  const answer = await fetch(`${server.url}${path}`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  expect(answer.status, path).toBe(200);
  return Buffer.from(await answer.arrayBuffer());
}

beforeAll(async () => {
  hanging = createServer(() => {
    // Never answers.
    hangingRequests += 1;
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/never`;
  [pwA, pwB, grid, fixtures] = await Promise.all([
    startPlaywrightServer(),
    startPlaywrightServer(),
    startSeleniumGrid(4),
    startFixtureServer(),
  ]);
}, 300_000);

afterAll(async () => {
  // The engines go first: a server's shutdown then never waits on a browser that is still busy.
  await Promise.all([pwA?.close(), pwB?.close(), grid?.close()]);
  await Promise.all([...servers.map((server) => server.close()), fixtures?.close()]);
  hanging?.closeAllConnections();
  await new Promise((resolve) => (hanging ? hanging.close(resolve) : resolve(undefined)));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
}, SLOW);

describe('browser.backends in settings', () => {
  it(
    'refuses a wrong backend with a 400 naming the field, and at start with the key',
    async () => {
      const server = await serve([{ name: 'local', type: 'local', max_computers: 2 }]);
      const wrongUrl = await server.request('PATCH', '/settings', {
        browser: { backends: [{ name: 'grid', type: 'selenium', url: 'ws://hub:4444' }] },
      });
      expect(wrongUrl.status).toBe(400);
      expect(wrongUrl.body.param).toBe('browser.backends.0.url');
      expect(wrongUrl.body.message).toContain('http://hub:4444');

      const twice = await server.request('PATCH', '/settings', {
        browser: {
          backends: [
            { name: 'a', type: 'playwright', url: 'ws://127.0.0.1:1/' },
            { name: 'a', type: 'local' },
          ],
        },
      });
      expect(twice.status).toBe(400);
      expect(twice.body.param).toBe('browser.backends.1.name');

      const unknownType = await server.request('PATCH', '/settings', {
        browser: { backends: [{ name: 'x', type: 'firefox' }] },
      });
      expect(unknownType.status).toBe(400);
      expect(unknownType.body.param).toBe('browser.backends.0.type');

      expect(() =>
        resolveSettings({
          stored: {},
          env: {},
          flags: { browser: { backends: [{ name: 'pw', type: 'playwright' }] } },
        }),
      ).toThrow(ConfigError);
      expect(() =>
        resolveSettings({
          stored: {},
          env: {},
          flags: { browser: { backends: [{ name: 'pw', type: 'playwright' }] } },
        }),
      ).toThrow(/browser\.backends\.0\.url/);

      // By default there is one backend: this machine's Chromium.
      const plain = resolveSettings({ stored: {}, env: {} });
      expect(plain.browser.backends).toEqual([{ name: 'local', type: 'local', max_computers: 20 }]);
    },
    SLOW,
  );
});

describe('placement, faults and recovery', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await serve([
      { name: 'local', type: 'local', max_computers: 2 },
      playwright('pw-a', pwA),
      playwright('pw-b', pwB),
    ]);
  }, SLOW);

  it(
    'GET /backends lists each backend with its type, url, status, capacity and load',
    async () => {
      expect(await backends(server)).toEqual([
        { name: 'local', type: 'local', url: null, status: 'up', capacity: 2, running: 0 },
        { name: 'pw-a', type: 'playwright', url: pwA.url, status: 'up', capacity: 4, running: 0 },
        { name: 'pw-b', type: 'playwright', url: pwB.url, status: 'up', capacity: 4, running: 0 },
      ]);
      const anonymous = await server.request('GET', '/backends', undefined, { key: null });
      expect(anonymous.status).toBe(401);
    },
    SLOW,
  );

  it(
    'places each new computer on the backend with the most free capacity',
    async () => {
      const placed: string[] = [];
      for (let i = 0; i < 6; i++) {
        const expected = mostFree(await backends(server));
        const computer = await create(server);
        expect(computer.backend).toBe(expected);
        placed.push(computer.id);
        const retrieved = await server.request<Computer>('GET', `/computers/${computer.id}`);
        expect(retrieved.body.backend).toBe(expected);
      }
      // 2 + 4 + 4 slots, filled from the emptiest (the first listed among equals): the servers
      // took two each before local, now as free as they, took one; then pw-a.
      const running = Object.fromEntries((await backends(server)).map((b) => [b.name, b.running]));
      expect(running).toEqual({ local: 1, 'pw-a': 3, 'pw-b': 2 });
      for (const id of placed) await server.request('DELETE', `/computers/${id}`);
      expect((await backends(server)).map((backend) => backend.running)).toEqual([0, 0, 0]);
    },
    SLOW,
  );

  it(
    'a computer with cdp goes to this machine, whatever the load',
    async () => {
      const computer = await create(server, { cdp: true });
      expect(computer.backend).toBe('local');
      expect(computer.cdp_url).toMatch(/^ws:/);
      await server.request('DELETE', `/computers/${computer.id}`);
    },
    SLOW,
  );

  it(
    'a backend killed mid-action ends its computers as backend_lost; new ones go elsewhere, and it is used again once back',
    async () => {
      // pw-a, then pw-b: the first two computers land one on each server.
      const first = await create(server);
      const onB = await create(server);
      expect([first.backend, onB.backend]).toEqual(['pw-a', 'pw-b']);
      const events = await SseReader.open(`${server.url}/computers/${onB.id}/events`, server.key);
      const pending = act(server, onB.id, 'navigate', { url: hangingUrl });
      // The navigation is under way on the server (its request reached the page that never answers).
      await eventually(() => hangingRequests > 0, SLOW);
      await pwB.kill();

      const answered = await pending;
      expect(answered.status).toBeLessThan(500);
      const ended = await eventually(async () => {
        const computer = (await server.request<Computer>('GET', `/computers/${onB.id}`)).body;
        return computer.status === 'terminated' && computer;
      }, SLOW);
      expect(ended.termination_reason).toBe('backend_lost');
      const status = await eventually(async () => {
        const event = await events.next(SLOW);
        const data = event?.data as { type?: string; termination_reason?: string } | undefined;
        return data?.type === 'status' && data;
      }, SLOW);
      expect(status.termination_reason).toBe('backend_lost');
      events.close();
      // An action on it answers 404 and says why it ended.
      const after = await act(server, onB.id, 'click', { x: 10, y: 10 });
      expect(after.status).toBe(404);
      expect(after.body.message).toContain('backend_lost');

      // New computers go elsewhere at once, even before a health check has noticed.
      const elsewhere = [await create(server), await create(server), await create(server)];
      expect(elsewhere.map((computer) => computer.backend)).not.toContain('pw-b');
      const down = await eventually(async () => {
        const listed = await backends(server);
        return listed.find((b) => b.name === 'pw-b' && b.status === 'down');
      }, SLOW);
      expect(down.running).toBe(0);
      // The other server's computer is untouched.
      const navigated = await act(server, first.id, 'navigate', {
        url: `${fixtures.url}/actions.html`,
      });
      expect(navigated.body.status).toBe('success');

      await pwB.restart();
      await eventually(async () => {
        const listed = await backends(server);
        return listed.find((b) => b.name === 'pw-b')?.status === 'up';
      }, SLOW);
      // pw-b has the most free capacity now: the next computer goes there and works.
      expect(mostFree(await backends(server))).toBe('pw-b');
      const back = await create(server);
      expect(back.backend).toBe('pw-b');
      const works = await act(server, back.id, 'navigate', { url: `${fixtures.url}/actions.html` });
      expect(works.body.status).toBe('success');
      for (const computer of [first, back, ...elsewhere]) {
        await server.request('DELETE', `/computers/${computer.id}`);
      }
    },
    SLOW,
  );
});

describe('browser.backends changed while Benchtop runs', () => {
  it(
    'a backend added, resized or taken out by PATCH /settings applies at once; a computer on one taken out runs on',
    async () => {
      const local = (max: number): BrowserBackendSettings => ({
        name: 'local',
        type: 'local',
        max_computers: max,
      });
      // In config.json, as the window's settings screen keeps them (a flag would stay above it).
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-backends-'));
      dataDirs.push(dataDir);
      writeStoredSettings(dataDir, { browser: { backends: [local(1)] } });
      const server = await startTestServer({ browser: { warm_pool: 0 } }, { dataDir });
      servers.push(server);
      const patch = (list: BrowserBackendSettings[]) =>
        server.request('PATCH', '/settings', { browser: { backends: list } });

      const added = await patch([local(1), playwright('pw-a', pwA, 2)]);
      expect(added.status, added.text).toBe(200);
      expect(added.body.restart_required).toEqual([]);
      expect((await backends(server)).map((backend) => backend.name)).toEqual(['local', 'pw-a']);
      await eventually(
        async () => (await backends(server)).find((b) => b.name === 'pw-a')?.status === 'up',
        SLOW,
      );
      // pw-a has two free slots against local's one: the new computer goes there, and works.
      const remote = await create(server);
      expect(remote.backend).toBe('pw-a');
      const url = `${fixtures.url}/actions.html`;
      expect((await act(server, remote.id, 'navigate', { url })).body.status).toBe('success');

      // A new max_computers applies to the running backend, which keeps its computer.
      expect((await patch([local(5), playwright('pw-a', pwA, 3)])).status).toBe(200);
      expect(await backends(server)).toEqual([
        { name: 'local', type: 'local', url: null, status: 'up', capacity: 5, running: 0 },
        { name: 'pw-a', type: 'playwright', url: pwA.url, status: 'up', capacity: 3, running: 1 },
      ]);

      // Taken out: no longer listed, nothing new placed there, and its computer runs on.
      expect((await patch([local(5)])).status).toBe(200);
      expect((await backends(server)).map((backend) => backend.name)).toEqual(['local']);
      const next = await create(server);
      expect(next.backend).toBe('local');
      const still = await act(server, remote.id, 'click', { x: 150, y: 150 });
      expect(still.body.status, still.text).toBe('success');
      expect((await pageState(server, remote.id)).events).toContain(
        'click 150,150 left detail=1 on target',
      );
      const running = (await server.request<Computer>('GET', `/computers/${remote.id}`)).body;
      expect(running).toMatchObject({ status: 'running', backend: 'pw-a' });
      expect((await server.request('DELETE', `/computers/${remote.id}`)).status).toBe(204);

      // Put back, it is used again.
      expect((await patch([local(1), playwright('pw-a', pwA, 2)])).status).toBe(200);
      await eventually(
        async () => (await backends(server)).find((b) => b.name === 'pw-a')?.status === 'up',
        SLOW,
      );
      const again = await create(server);
      expect(again.backend).toBe('pw-a');
      expect((await act(server, again.id, 'navigate', { url })).body.status).toBe('success');
      for (const computer of [next, again]) {
        await server.request('DELETE', `/computers/${computer.id}`);
      }
    },
    SLOW,
  );
});

/** What a user does with a browser computer, on a server whose only backend is `backend`. */
async function everythingWorks(server: TestServer, backend: string): Promise<string> {
  const computer = await create(server);
  expect(computer.backend).toBe(backend);
  const { id } = computer;
  const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);

  const navigated = await act(server, id, 'navigate', { url: `${fixtures.url}/actions.html` });
  expect(navigated.body.status, navigated.text).toBe('success');
  expect(navigated.body.page_context.url).toBe(`${fixtures.url}/actions.html`);
  expect((await act(server, id, 'click', { x: 150, y: 150 })).body.status).toBe('success');
  await act(server, id, 'click', { x: 500, y: 150 });
  expect((await act(server, id, 'type', { text: 'remote hello' })).body.status).toBe('success');
  const state = await pageState(server, id);
  expect(state.events).toContain('click 150,150 left detail=1 on target');
  expect(state.typed).toBe('remote hello');

  // A screenshot's URL is served by Benchtop, without a key, at the display's size.
  const shot = await act(server, id, 'screenshot');
  expect(shot.body.result.screenshot_url).toMatch(new RegExp(`^${server.url}/screenshots/`));
  const png = Buffer.from(await (await fetch(shot.body.result.screenshot_url)).arrayBuffer());
  expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 1280, height: 720 });

  // Tabs and a batch.
  const opened = await server.request('POST', `/computers/${id}/tabs`, {
    url: `${fixtures.url}/tab.html`,
  });
  expect(opened.status, opened.text).toBe(200);
  const tabs = await server.request('GET', `/computers/${id}/tabs`);
  expect(tabs.body.result.tabs).toHaveLength(2);
  const batch = await act(server, id, 'batch', {
    actions: [
      { type: 'navigate', url: `${fixtures.url}/actions.html` },
      { type: 'click', x: 160, y: 160 },
    ],
  });
  expect(batch.status).toBe(200);
  expect(JSON.stringify(batch.body)).not.toContain('"error"');

  // Its events carry the navigations, its screencast sends frames of its screen.
  const navigations = await eventually(async () => {
    const event = await events.next(SLOW);
    const data = event?.data as { type?: string; url?: string } | undefined;
    return data?.type === 'navigation' && data.url?.endsWith('/actions.html') && data;
  }, SLOW);
  expect(navigations.url).toBe(`${fixtures.url}/actions.html`);
  events.close();
  const screencast = await SseReader.open(`${server.url}/computers/${id}/screencast`, server.key);
  const frame = await eventually(async () => {
    const event = await screencast.next(SLOW);
    const data = event?.data as { image_data?: string; metadata?: { width: number } };
    return data?.image_data ? data : undefined;
  }, SLOW);
  expect(frame.metadata!.width).toBe(1280);
  screencast.close();

  // A download reaches the computer's downloads on this machine.
  await act(server, id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
  const [saved] = await eventually(async () => {
    const listed = await server.request('GET', `/computers/${id}/downloads`);
    return listed.body.data?.length > 0 && listed.body.data;
  }, SLOW);
  expect(saved).toMatchObject({ name: 'invoice.csv', size_bytes: INVOICE_BYTES });

  // Recording: the requests, the trace and the video, once it ended.
  expect((await server.request('DELETE', `/computers/${id}`)).status).toBe(204);
  const recording = await eventually(async () => {
    const answer = await server.request('GET', `/computers/${id}/recording`);
    return answer.body.status === 'complete' && answer.body;
  }, SLOW);
  const names = recording.files.map((file: { name: string }) => file.name).sort();
  expect(names).toEqual(['events.ndjson', 'recording.har', 'trace.zip', 'video.webm']);
  const har = JSON.parse((await download(server, `/computers/${id}/recording/har`)).toString());
  const urls = har.log.entries.map((entry: { request: { url: string } }) => entry.request.url);
  expect(urls).toContain(`${fixtures.url}/actions.html`);
  const trace = await zipNames(await download(server, `/computers/${id}/recording/trace.zip`));
  expect(trace).toContain('trace.trace');
  return id;
}

const SIGNED_IN = { cookie: 'alice', local: 'alice', idb: 'alice' };
const INVOICE_BYTES = statSync(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv')).size;

describe('a computer on a Playwright server', () => {
  it(
    'acts, opens tabs, runs batches, shows its screen and events, and is recorded',
    async () => {
      const server = await serve([playwright('pw-a', pwA)]);
      await everythingWorks(server, 'pw-a');
    },
    SLOW,
  );
});

describe('a computer on a Selenium Grid', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await serve([selenium()]);
  }, SLOW);

  it(
    'acts, opens tabs, runs batches, shows its screen and events, and is recorded',
    async () => {
      await everythingWorks(server, 'grid');
      // Its WebDriver session was deleted with it: the node has no session left.
      await eventually(async () => {
        const status = await (await fetch(`${grid.url}/status`)).json();
        const slots = status.value.nodes.flatMap((node: { slots: unknown[] }) => node.slots);
        return slots.every((slot: { session: unknown }) => slot.session === null);
      }, SLOW);
    },
    SLOW,
  );

  it(
    'saves its storage on one backend and restores it on another',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-backends-'));
      dataDirs.push(dataDir);
      const call = (target: TestServer) => (method: string, path: string, body?: unknown) =>
        target.request(method, path, body);
      const onServer = await serve([playwright('pw-a', pwA)], dataDir);
      const saved = await create(onServer, { persistent: true });
      expect(saved.backend).toBe('pw-a');
      const visited = await visitLoginPage(
        call(onServer),
        fixtures.url,
        saved.id,
        '?login&mark=alice',
      );
      expect(visited).toMatchObject(SIGNED_IN);
      expect((await onServer.request('DELETE', `/computers/${saved.id}`)).status).toBe(204);
      await onServer.close();
      servers.splice(servers.indexOf(onServer), 1);

      const onGrid = await serve([selenium()], dataDir);
      const restored = await create(onGrid, { environment_id: saved.id });
      expect(restored.backend).toBe('grid');
      expect(await visitLoginPage(call(onGrid), fixtures.url, restored.id)).toMatchObject(
        SIGNED_IN,
      );
      await onGrid.request('DELETE', `/computers/${restored.id}`);
    },
    SLOW,
  );

  /** The computer, once it has ended (a failure says how it was last seen). */
  const ended = (id: string) =>
    eventually(async () => {
      const answer = await server.request<Computer>('GET', `/computers/${id}`);
      expect(answer.status).toBeLessThan(500);
      expect(answer.body).toMatchObject({ status: 'terminated' });
      return answer.body;
    }, 30_000);

  it(
    'a Grid node that stops answering ends its computers as backend_lost',
    async () => {
      const computer = await create(server);
      expect(computer.backend).toBe('grid');
      // Frozen, the node keeps its sockets open and stays listed as up: only the session's own
      // checks can tell.
      grid.freezeNode(true);
      try {
        expect((await ended(computer.id)).termination_reason).toBe('backend_lost');
      } finally {
        grid.freezeNode(false);
      }
    },
    SLOW,
  );

  it(
    'a Grid node that goes away ends its computers as backend_lost',
    async () => {
      const computer = await create(server);
      expect(computer.backend).toBe('grid');
      await grid.killNode();
      // The hub may keep the CDP socket open and the dead node listed for a minute or more.
      expect((await ended(computer.id)).termination_reason).toBe('backend_lost');
    },
    SLOW,
  );
});
