import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Computer } from '../../src/shared/computers.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startBenchtop } from '../../src/main/start-benchtop.js';
import { sourceAppPaths } from '../helpers/app-paths.js';
import {
  startTestServer,
  testKey,
  type ApiResponse,
  type TestServer,
} from '../helpers/test-server.js';

/**
 * GET/PATCH /settings through the real server: what the settings screen of the window shows
 * and changes, what applies at once, what config.json holds, and what a restart keeps.
 */

const API_KEY = 'sk-provider-secret-7c1e9a04d2';
const PROXY_PASSWORD = 'proxy-pass-5b8d';
const GRID_PASSWORD = 'grid-pass-91c3';

const dir = mkdtempSync(join(tmpdir(), 'benchtop-settings-'));
const dataDir = join(dir, 'data');
const configFile = join(dataDir, 'config.json');
const script = join(dir, 'added.json');
writeFileSync(
  script,
  JSON.stringify({ turns: [{ output: [{ type: 'message', text: 'added!' }] }] }),
);

let server: TestServer;
let upstream: FakeOpenAI;
const logs: string[] = [];
/** Every answer's text, to prove no secret ever leaves. */
const answers: string[] = [];

async function call<T = any>(method: string, path: string, body?: unknown, key?: string) {
  const response = await server.request<T>(method, path, body, { key });
  answers.push(response.text);
  return response;
}

const patch = (body: unknown, key?: string) => call('PATCH', '/settings', body, key);
const stored = () => JSON.parse(readFileSync(configFile, 'utf8'));

function expectOk(response: ApiResponse): void {
  expect(response.status, response.text).toBe(200);
}

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  server = await startTestServer({}, { dataDir, log: (line) => logs.push(line) });
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('settings', () => {
  it('GET shows the settings file shape with what overrides it', async () => {
    const response = await call('GET', '/settings');
    expectOk(response);
    expect(Object.keys(response.body.settings)).toEqual([
      'server',
      'browser',
      'desktop',
      'exec',
      'organizations',
      'limits',
      'proxy',
      'recording',
      'models',
      'policies',
      'approvals',
      'notifications',
    ]);
    expect(response.body.settings.exec).toEqual({ enabled: true, sandbox_owner: true });
    expect(response.body.settings.recording).toEqual({
      enabled: true,
      retention_days: 7,
      max_disk_mb: 10_240,
      ffmpeg_path: null,
    });
    expect(response.body.settings.organizations).toEqual({});
    expect(response.body.restart_required).toEqual([]);
    // The test server's own settings act as flags.
    expect(response.body.overridden).toEqual(expect.arrayContaining(['server.port']));
  });

  it('exec.enabled false refuses exec at once, is stored, and survives a restart', async () => {
    const computer = (await call<Computer>('POST', '/computers', {})).body;
    const run = () => call('POST', `/computers/${computer.id}/exec/sync`, { command: 'echo hi' });
    expect((await run()).body.stdout).toBe('hi\n');

    const answer = await patch({ exec: { enabled: false } });
    expectOk(answer);
    expect(answer.body.settings.exec.enabled).toBe(false);
    expect(answer.body.restart_required).toEqual([]);
    const refused = await run();
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe('exec_disabled');
    expect(stored().exec).toEqual({ enabled: false });

    await server.close();
    server = await startTestServer({}, { dataDir, log: (line) => logs.push(line) });
    expect((await call('GET', '/settings')).body.settings.exec.enabled).toBe(false);
    const again = (await call<Computer>('POST', '/computers', {})).body;
    const after = await call('POST', `/computers/${again.id}/exec/sync`, { command: 'true' });
    expect(after.body.code).toBe('exec_disabled');

    // null removes the key: the default (enabled) applies again, at once.
    expectOk(await patch({ exec: { enabled: null } }));
    expect(stored().exec).toEqual({});
    const back = await call('POST', `/computers/${again.id}/exec/sync`, { command: 'echo ok' });
    expect(back.body.stdout).toBe('ok\n');
    await call('DELETE', `/computers/${again.id}`);
  });

  it('a concurrency limit applies to the next create at once', async () => {
    const first = await call<Computer>('POST', '/computers', {});
    expectOk(first);
    expectOk(await patch({ limits: { browsers_per_org: 1 } }));
    const second = await call('POST', '/computers', {});
    expect(second.status, second.text).toBe(429);
    expect(second.body.code).toBe('concurrency_limit');
    expectOk(await patch({ limits: { browsers_per_org: null } }));
    await call('DELETE', `/computers/${first.body.id}`);
  });

  it('a scripted model added by PATCH is listed and answers at once; the default stays', async () => {
    const answer = await patch({
      models: { providers: { added: { provider: 'scripted', script } } },
    });
    expectOk(answer);
    const models = await call('GET', '/v1/models');
    const ids = models.body.data.map((model: { id: string }) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['added', 'tzafon.northstar-cua-fast']));
    const reply = await call('POST', '/v1/responses', { model: 'added', input: 'hi' });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).toContain('added!');

    expectOk(await patch({ models: { providers: { added: null } } }));
    const after = await call('GET', '/v1/models');
    expect(after.body.data.map((model: { id: string }) => model.id)).not.toContain('added');
  });

  it('a provider api_key is masked, kept by "********", and used upstream', async () => {
    const set = await patch({
      models: {
        providers: { paid: { provider: 'openai', base_url: upstream.url, api_key: API_KEY } },
      },
    });
    expectOk(set);
    expect(set.body.settings.models.providers.paid.api_key).toBe('********');
    expect((await call('GET', '/settings')).body.settings.models.providers.paid).toEqual({
      provider: 'openai',
      base_url: upstream.url,
      api_key: '********',
    });

    // The window sends the entry back as it showed it, with one field changed.
    const shown = (await call('GET', '/settings')).body.settings.models.providers.paid;
    expectOk(await patch({ models: { providers: { paid: { ...shown, model: 'gpt-4o' } } } }));
    expect(stored().models.providers.paid).toMatchObject({ api_key: API_KEY, model: 'gpt-4o' });

    const chat = JSON.parse(
      readFileSync(
        join(import.meta.dirname, '..', 'fixtures', 'providers', 'openai', 'chat-completion.json'),
        'utf8',
      ),
    );
    upstream.reply({ json: chat });
    const messages = [{ role: 'user', content: 'hi' }];
    const reply = await call('POST', '/v1/chat/completions', { model: 'paid', messages });
    expect(reply.status, reply.text).toBe(200);
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body).toMatchObject({ model: 'gpt-4o' });
  });

  it('a proxy password is masked and kept when sent back masked', async () => {
    const url = `http://user:${PROXY_PASSWORD}@127.0.0.1:9`;
    const set = await patch({ proxy: { advanced_proxy_url: url } });
    expectOk(set);
    expect(set.body.settings.proxy.advanced_proxy_url).toBe('http://user:***@127.0.0.1:9');
    expectOk(await patch({ proxy: set.body.settings.proxy }));
    expect(stored().proxy.advanced_proxy_url).toBe(url);
    expectOk(await patch({ proxy: { advanced_proxy_url: null } }));
  });

  it("a Grid's password in a backend URL is masked and kept when sent back masked", async () => {
    const url = `http://grid:${GRID_PASSWORD}@127.0.0.1:9/`;
    const local = { name: 'local', type: 'local', max_computers: 20 };
    const set = await patch({
      browser: { backends: [local, { name: 'grid', type: 'selenium', url, max_computers: 2 }] },
    });
    expectOk(set);
    const shown = set.body.settings.browser.backends;
    expect(shown[1].url).toBe('http://grid:***@127.0.0.1:9/');
    expect((await call('GET', '/settings')).body.settings.browser.backends[1].url).toBe(
      'http://grid:***@127.0.0.1:9/',
    );
    // The settings screen sends the list back as it showed it, with one change.
    const changed = [shown[0], { ...shown[1], max_computers: 3 }];
    expectOk(await patch({ browser: { backends: changed } }));
    expect(stored().browser.backends[1]).toEqual({ ...changed[1], url });
    expectOk(await patch({ browser: { backends: null } }));
  });

  it('invalid patches answer 400 naming the key and store nothing', async () => {
    const before = readFileSync(configFile, 'utf8');
    const cases: Array<[unknown, string]> = [
      [{ limits: { max_tabs: 5, speed: 1 } }, 'limits.speed'],
      [{ exec: { enabled: 'no' } }, 'exec.enabled'],
      [{ colour: 'blue' }, 'colour'],
      [{ models: { providers: { half: { script } } } }, 'models.providers.half.provider'],
      [
        { models: { providers: { typo: { provider: 'scripted', script: `${script}x` } } } },
        'models.providers.typo.script',
      ],
    ];
    for (const [body, param] of cases) {
      const response = await patch(body);
      expect(response.status, response.text).toBe(400);
      expect(response.body).toMatchObject({ code: 'invalid_request', param });
      expect(response.body.message).toContain(param);
    }
    const typo = await patch(cases.at(-1)![0]);
    expect(typo.body.message).toContain(`cannot read ${script}x (ENOENT)`);
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    expect((await call('GET', '/settings')).body.settings.limits.max_tabs).toBe(20);
  });

  it('a config.json broken by hand while running is named in a 503 and left as it was', async () => {
    const before = existsSync(configFile) ? readFileSync(configFile, 'utf8') : '{}';
    const broken = '{"limits": {"max_tabs": 9,}}';
    writeFileSync(configFile, broken);
    try {
      const refused = await patch({ limits: { max_tabs: 7 } });
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body.code).toBe('unavailable');
      expect(refused.body.message).toContain(
        `the settings cannot be saved: ${configFile} is not valid JSON`,
      );
      expect(readFileSync(configFile, 'utf8')).toBe(broken);
      // What runs is unchanged, and still shown.
      expect((await call('GET', '/settings')).body.settings.limits.max_tabs).toBe(20);
    } finally {
      writeFileSync(configFile, before);
    }
    expectOk(await patch({ limits: { max_tabs: null } }));
  });

  it('server.port is stored and waits for a restart', async () => {
    const answer = await patch({ server: { port: 4999 } });
    expectOk(answer);
    expect(answer.body.restart_required).toEqual(['server.port']);
    expect(stored().server.port).toBe(4999);
    // Still listening where it was; GET keeps saying a restart is needed.
    const again = await call('GET', '/settings');
    expect(again.body.restart_required).toEqual(['server.port']);
    expectOk(await patch({ server: { port: null } }));
    expect((await call('GET', '/settings')).body.restart_required).toEqual([]);
  });

  it('only organization local may read or change settings', async () => {
    const other = server.core.keys.create('acme').key;
    const before = readFileSync(configFile, 'utf8');
    for (const response of [
      await call('GET', '/settings', undefined, other),
      await patch({ exec: { enabled: false } }, other),
    ]) {
      expect(response.status, response.text).toBe(403);
      expect(response.body.code).toBe('forbidden');
      expect(response.body.message).toMatch(/organization "local"/);
    }
    expect(readFileSync(configFile, 'utf8')).toBe(before);
  });

  it('no answer and no log line ever held a secret', () => {
    for (const text of [...answers, ...logs]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(PROXY_PASSWORD);
      expect(text).not.toContain(GRID_PASSWORD);
    }
  });
});

describe('a setting also given as a flag', () => {
  it('keeps the flag while running; the stored value applies at a start without it', async () => {
    const own = join(dir, 'flagged');
    const flagged = await startTestServer({ limits: { max_tabs: 5 } }, { dataDir: own });
    try {
      const answer = await flagged.request('PATCH', '/settings', { limits: { max_tabs: 7 } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.settings.limits.max_tabs).toBe(5);
      expect(answer.body.overridden).toContain('limits.max_tabs');
      expect(JSON.parse(readFileSync(join(own, 'config.json'), 'utf8')).limits.max_tabs).toBe(7);
    } finally {
      await flagged.close();
    }
    const plain = await startTestServer({}, { dataDir: own });
    try {
      const shown = await plain.request('GET', '/settings');
      expect(shown.body.settings.limits.max_tabs).toBe(7);
      expect(shown.body.overridden).not.toContain('limits.max_tabs');
    } finally {
      await plain.close();
    }
  });
});

describe('a setting also given as a BENCHTOP_* variable, through the real composition root', () => {
  it('is listed as overridden and keeps its value while running', async () => {
    const own = join(dir, 'variable');
    const key = testKey();
    const benchtop = await startBenchtop({
      paths: sourceAppPaths(),
      dataDir: own,
      env: { BENCHTOP_API_KEY: key, BENCHTOP_EXEC_ENABLED: 'false' },
      flags: { server: { port: 0 }, browser: { warm_pool: 0 }, desktop: { warm_pool: 0 } },
      log: () => {},
    });
    try {
      const answer = await fetch(`${benchtop.server.url}/settings`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ exec: { enabled: true } }),
      });
      const body = await answer.json();
      expect(answer.status).toBe(200);
      expect(body.settings.exec.enabled).toBe(false);
      expect(body.overridden).toEqual(expect.arrayContaining(['exec.enabled', 'server.port']));
      expect(benchtop.core.settings.exec.enabled).toBe(false);
      expect(JSON.parse(readFileSync(join(own, 'config.json'), 'utf8')).exec.enabled).toBe(true);
    } finally {
      await benchtop.close();
    }
  });
});
