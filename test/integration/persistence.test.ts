import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Computer, Environment } from '../../src/shared/computers.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { visitLoginPage } from '../helpers/page-state.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/** Persistent computers: what a browser or desktop saves on termination comes back in a new one. */

type Found = {
  cookie: string | null;
  local: string | null;
  idb: string | null;
  big_length: number;
};

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'benchtop.js');
let fixtures: FixtureServer;
const servers: TestServer[] = [];
const dataDirs: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await fixtures?.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-persist-'));
  dataDirs.push(dir);
  return dir;
}

async function serve(dataDir = newDataDir(), settings = {}): Promise<TestServer> {
  const server = await startTestServer({ browser: { warm_pool: 0 }, ...settings }, { dataDir });
  servers.push(server);
  return server;
}

async function create(server: TestServer, body: Record<string, unknown>): Promise<Computer> {
  const response = await server.request<Computer>('POST', '/computers', body);
  expect(response.status, response.text).toBe(200);
  return response.body;
}

const visit = (server: TestServer, id: string, query = ''): Promise<Found> =>
  visitLoginPage(
    (method, path, body) => server.request(method, path, body),
    fixtures.url,
    id,
    query,
  );

const SIGNED_IN = { cookie: 'alice', local: 'alice', idb: 'alice' };

async function loginAndDelete(server: TestServer): Promise<string> {
  const computer = await create(server, { persistent: true });
  expect(await visit(server, computer.id, '?login&mark=alice')).toMatchObject(SIGNED_IN);
  expect((await server.request('DELETE', `/computers/${computer.id}`)).status).toBe(204);
  return computer.id;
}

describe('browser environments', () => {
  it('a deleted persistent computer comes back with its cookie, localStorage and IndexedDB', async () => {
    const server = await serve();
    const id = await loginAndDelete(server);

    const plain = await create(server, {});
    expect(await visit(server, plain.id)).toMatchObject({ cookie: null, local: null, idb: null });

    const restored = await create(server, { environment_id: id });
    expect(restored.environment_id).toBe(id);
    expect(await visit(server, restored.id)).toMatchObject(SIGNED_IN);
  });

  it('environments survive a restart of the server', async () => {
    const dataDir = newDataDir();
    const first = await serve(dataDir);
    const id = await loginAndDelete(first);
    await first.close();
    servers.splice(servers.indexOf(first), 1);

    const second = await serve(dataDir);
    const restored = await create(second, { environment_id: id });
    expect(await visit(second, restored.id)).toMatchObject(SIGNED_IN);
  });

  it('saves on shutdown and on idle timeout, not only on delete', async () => {
    const dataDir = newDataDir();
    const first = await serve(dataDir);
    const atShutdown = await create(first, { persistent: true });
    await visit(first, atShutdown.id, '?login&mark=alice');
    // Long enough that a loaded machine's pause between the visit's calls does not end it early.
    const idle = await create(first, { persistent: true, inactivity_timeout_seconds: 4 });
    await visit(first, idle.id, '?login&mark=bob');
    await eventually(
      async () =>
        (await first.request('GET', `/computers/${idle.id}`)).body.status === 'terminated',
      20_000,
    );
    await first.close();
    servers.splice(servers.indexOf(first), 1);

    const second = await serve(dataDir);
    const listed = await second.request<Environment[]>('GET', '/computers?type=persistent');
    expect(listed.body.map((environment) => environment.id).sort()).toEqual(
      [atShutdown.id, idle.id].sort(),
    );
    const fromIdle = await create(second, { environment_id: idle.id });
    expect(await visit(second, fromIdle.id)).toMatchObject({ cookie: 'bob', local: 'bob' });
    const fromShutdown = await create(second, { environment_id: atShutdown.id });
    expect(await visit(second, fromShutdown.id)).toMatchObject(SIGNED_IN);
  });

  it('a restored persistent computer saves back into its environment', async () => {
    const server = await serve();
    const id = await loginAndDelete(server);
    const before = (await server.request<Environment[]>('GET', '/computers?type=persistent')).body;

    const again = await create(server, { environment_id: id, persistent: true });
    await visit(server, again.id, '?login&mark=carol');
    await server.request('DELETE', `/computers/${again.id}`);

    const after = (await server.request<Environment[]>('GET', '/computers?type=persistent')).body;
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      id,
      kind: 'browser',
      created_at: before[0]!.created_at,
      source_computer_id: again.id,
    });
    expect(Date.parse(after[0]!.updated_at)).toBeGreaterThan(Date.parse(before[0]!.updated_at));
    const third = await create(server, { environment_id: id });
    expect(await visit(server, third.id)).toMatchObject({ cookie: 'carol', idb: 'carol' });
  });

  it('lists environments per organization and deletes them', async () => {
    const server = await serve();
    const id = await loginAndDelete(server);
    const listed = await server.request<Environment[]>('GET', '/computers?type=persistent');
    expect(listed.body).toEqual([
      {
        id,
        kind: 'browser',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        source_computer_id: id,
      },
    ]);

    const other = server.core.keys.create('acme').key;
    const theirs = await server.request('GET', '/computers?type=persistent', undefined, {
      key: other,
    });
    expect(theirs.body).toEqual([]);
    const stolen = await server.request(
      'POST',
      '/computers',
      { environment_id: id },
      { key: other },
    );
    expect(stolen.status).toBe(400);
    expect(stolen.body.param).toBe('environment_id');
    expect(
      (await server.request('DELETE', `/environments/${id}`, undefined, { key: other })).status,
    ).toBe(404);

    expect((await server.request('DELETE', `/environments/${id}`)).status).toBe(204);
    expect((await server.request('GET', '/computers?type=persistent')).body).toEqual([]);
    expect((await server.request('DELETE', `/environments/${id}`)).status).toBe(404);
    const gone = await server.request('POST', '/computers', { environment_id: id });
    expect(gone.status).toBe(400);
    expect(gone.body.message).toContain(id);
  });

  it('refuses unknown, unreadable and other-kind environments, naming them', async () => {
    const server = await serve();
    const unknown = await server.request('POST', '/computers', { environment_id: 'comp_nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_request', param: 'environment_id' });
    expect(unknown.body.message).toContain('comp_nope');

    const id = await loginAndDelete(server);
    const desktop = await server.request('POST', '/computers', {
      kind: 'desktop',
      environment_id: id,
    });
    expect(desktop.status).toBe(400);
    expect(desktop.body.message).toMatch(/browser/);

    const dir = join(server.dataDir, 'environments', 'local', id);
    const restoredBeforeDamage = await create(server, { environment_id: id, persistent: true });
    writeFileSync(join(dir, 'storage-state.json'), '{"cookies": [');
    const broken = await server.request('POST', '/computers', { environment_id: id });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toContain(id);
    expect(broken.body.message).toContain('unreadable');

    // Saving into an environment whose record is unreadable fails loudly and keeps the damage.
    writeFileSync(join(dir, 'meta.json'), 'not json');
    const deleted = await server.request('DELETE', `/computers/${restoredBeforeDamage.id}`);
    expect(deleted.status).toBe(500);
    expect(deleted.body.message).toContain(id);
    expect(readFileSync(join(dir, 'meta.json'), 'utf8')).toBe('not json');
    // The list still answers (without it); restoring it is refused, naming it.
    const listed = await server.request('GET', '/computers?type=persistent');
    expect(listed.status).toBe(200);
    expect(listed.body.map((environment: { id: string }) => environment.id)).not.toContain(id);
    const restore = await server.request('POST', '/computers', { environment_id: id });
    expect(restore.status).toBe(400);
    expect(restore.body.message).toContain(id);
  });
});

describe('desktop environments', () => {
  it('a file written by exec into the workspace is there in the restored computer', async () => {
    const server = await serve(newDataDir(), { limits: { desktops_per_org: 2 } });
    const first = await create(server, { kind: 'desktop', persistent: true });
    const wrote = await server.request('POST', `/computers/${first.id}/exec/sync`, {
      command: 'mkdir -p notes && echo "kept across computers" > notes/today.txt',
    });
    expect(wrote.status, wrote.text).toBe(200);
    expect((await server.request('DELETE', `/computers/${first.id}`)).status).toBe(204);

    const restored = await create(server, { kind: 'desktop', environment_id: first.id });
    const read = await server.request('POST', `/computers/${restored.id}/exec/sync`, {
      command: 'cat notes/today.txt',
    });
    expect(read.text).toContain('kept across computers');
  });
});

describe('a kill -9 during a save', () => {
  const running: ChildProcess[] = [];
  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  const KEY = 'sk_persist_test_0123456789abcdef';
  const BIG = 4_000_000;

  function start(
    dataDir: string,
    extraEnv: Record<string, string> = {},
  ): Promise<{ child: ChildProcess; url: string }> {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('BENCHTOP_')),
    );
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: {
        ...env,
        BENCHTOP_DATA_DIR: dataDir,
        BENCHTOP_API_KEY: KEY,
        BENCHTOP_BROWSER_WARM_POOL: '0',
        BENCHTOP_DESKTOP_WARM_POOL: '0',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.push(child);
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
        if (match) resolve({ child, url: match[1]! });
      });
      child.on('exit', (code) => reject(new Error(`benchtop exited with ${code}`)));
    });
  }

  const call = async (url: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  };

  async function signIn(url: string, body: unknown, mark: string): Promise<string> {
    const created = await call(url, 'POST', '/computers', body);
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    await call(url, 'POST', `/computers/${id}/navigate`, {
      url: `${fixtures.url}/login.html?login&mark=${mark}&big=${BIG}`,
    });
    await eventually(async () => {
      const html = await call(url, 'POST', `/computers/${id}/html`, {});
      return (html.body.result.html_content as string).includes(
        `"big_length":${BIG + mark.length}`,
      );
    }, 15_000);
    return id;
  }

  /** The saved big item's mark, or undefined when the environment is absent; throws when broken. */
  function savedMark(dataDir: string, id: string): string | undefined {
    const dir = join(dataDir, 'environments', 'local', id);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return undefined;
    }
    expect(names.sort()).toEqual(['meta.json', 'storage-state.json']);
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ id, kind: 'browser', org: 'local' });
    const state = JSON.parse(readFileSync(join(dir, 'storage-state.json'), 'utf8'));
    const items = state.origins.flatMap(
      (origin: { localStorage: Array<{ name: string; value: string }> }) => origin.localStorage,
    );
    const big = items.find((item: { name: string }) => item.name === 'big');
    expect(big.value).toHaveLength(BIG + 'mark0'.length);
    return big.value.slice(0, 5);
  }

  async function kill(server: { child: ChildProcess }): Promise<void> {
    server.child.kill('SIGKILL');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }

  /** What the organization's environments folder holds besides environments (mid-save folders). */
  const aside = (dataDir: string) =>
    readdirSync(join(dataDir, 'environments', 'local')).filter((name) => name.startsWith('.'));

  // Each save is stopped at a stage by the store's fault point (BENCHTOP_TEST_STOP_SAVE), which
  // announces it in a file: the kill then provably lands inside the save.
  it.each([
    ['written', 'the new folder is complete and nothing is moved yet'],
    ['swapping', 'the old folder is moved aside and the new one not yet in'],
  ])(
    'a kill -9 when %s (%s) leaves the old environment',
    async (stage) => {
      const dataDir = newDataDir();
      let server = await start(dataDir);
      const id = await signIn(server.url, { persistent: true }, 'mark0');
      expect((await call(server.url, 'DELETE', `/computers/${id}`)).status).toBe(204);
      expect(savedMark(dataDir, id)).toBe('mark0');
      await kill(server);

      const stopped = join(dataDir, 'save-stopped');
      server = await start(dataDir, { BENCHTOP_TEST_STOP_SAVE: `${stage}:${stopped}` });
      const computer = await signIn(server.url, { persistent: true, environment_id: id }, 'mark1');
      void fetch(`${server.url}/computers/${computer}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${KEY}` },
      }).catch(() => {});
      await eventually(() => existsSync(stopped), 30_000);
      // The save is where the stage says: the torn state a crash has to survive.
      const folders = readdirSync(join(dataDir, 'environments', 'local'));
      expect(folders.includes(id)).toBe(stage === 'written');
      expect(
        aside(dataDir)
          .map((name) => name.slice(0, 5))
          .sort(),
      ).toEqual(stage === 'written' ? ['.tmp-'] : ['.old-', '.tmp-']);
      await kill(server);

      server = await start(dataDir);
      expect(savedMark(dataDir, id)).toBe('mark0');
      expect(readdirSync(join(dataDir, 'environments', 'local'))).toEqual([id]);
      const listed = await call(server.url, 'GET', '/computers?type=persistent');
      expect(listed.body.map((environment: Environment) => environment.id)).toEqual([id]);
      await kill(server);
    },
    120_000,
  );

  it('a kill -9 right after a save leaves the new environment', async () => {
    const dataDir = newDataDir();
    let server = await start(dataDir);
    const id = await signIn(server.url, { persistent: true }, 'mark0');
    expect((await call(server.url, 'DELETE', `/computers/${id}`)).status).toBe(204);
    const computer = await signIn(server.url, { persistent: true, environment_id: id }, 'mark1');
    expect((await call(server.url, 'DELETE', `/computers/${computer}`)).status).toBe(204);
    await kill(server);

    server = await start(dataDir);
    expect(savedMark(dataDir, id)).toBe('mark1');
    expect(readdirSync(join(dataDir, 'environments', 'local'))).toEqual([id]);
    await kill(server);
  }, 120_000);
});
