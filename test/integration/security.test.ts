import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, VALID_BODY } from '../helpers/routes.js';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.js';

/** A raw request, so the Host and Origin headers are exactly what a test says. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text ? (JSON.parse(text) as unknown) : undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('rate limit per organization', () => {
  let server: TestServer;
  beforeAll(async () => {
    // One token every five seconds: however loaded the machine, the burst is spent long before
    // the bucket refills.
    server = await startTestServer({ limits: { requests_per_second: 0.2, burst: 10 } });
  });
  afterAll(() => server.close());

  it('answers 429 with Retry-After once an organization spends its burst; other organizations are unaffected', async () => {
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 40 && !answers.some((answer) => answer.status === 429); i++) {
      answers.push(await server.request('GET', '/computers'));
    }
    expect(answers.slice(0, 10).map((answer) => answer.status)).toEqual(Array(10).fill(200));
    const limited = answers.at(-1)!;
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited' });
    expect(limited.body.message).toMatch(/requests_per_second/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const ms = Number(limited.headers.get('retry-after-ms'));
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(5000);

    const { key: other } = server.core.keys.create('other');
    expect((await server.request('GET', '/computers', undefined, { key: other })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, ms + 50));
    expect((await server.request('GET', '/computers')).status).toBe(200);
    // /health needs no key and is not limited by one.
    expect((await server.request('GET', '/health', undefined, { key: null })).status).toBe(200);
  });
});

describe('failed authentications per address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: { auth_failures_before_block: 3 } });
  });
  afterAll(() => server.close());

  it('blocks the address after the limit for requests without a valid key, until the block is lifted', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await server.request('GET', '/computers', undefined, {
        key: `sk_wrong_${i}aaaaaaaaaaaaaaaa`,
      });
      expect(answer.status).toBe(401);
    }
    const blocked = await server.request('GET', '/computers', undefined, {
      key: 'sk_wrong_3aaaaaaaaaaaaaaaa',
    });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('ip_blocked');
    expect(blocked.body.message).toContain('127.0.0.1');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(server.core.guards.failures.blocks()).toMatchObject([{ ip: '127.0.0.1', failures: 3 }]);
    // A valid key is still served: the block stops guessing, not the machine's owner.
    expect((await server.request('GET', '/computers')).status).toBe(200);

    expect(server.core.guards.failures.lift('127.0.0.1')).toBe(true);
    const unblocked = await server.request('GET', '/computers', undefined, { key: null });
    expect(unblocked.status).toBe(401);
  });
});

describe('Host header and cross-origin requests', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      server: {
        allowed_hosts: ['localhost', 'benchtop.test'],
        cors_origins: ['http://app.test:3000'],
      },
    });
  });
  afterAll(() => server.close());

  const auth = () => ({ authorization: `Bearer ${server.key}` });

  it('refuses a Host that is not one of its names (DNS rebinding)', async () => {
    const port = new URL(server.url).port;
    const evil = await raw(`${server.url}/computers`, {
      headers: { ...auth(), host: `evil.example:${port}` },
    });
    expect(evil.status).toBe(403);
    expect(evil.body).toMatchObject({ code: 'forbidden' });
    expect(evil.body.message).toContain('server.allowed_hosts');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `benchtop.test:${port}`]) {
      expect((await raw(`${server.url}/computers`, { headers: { ...auth(), host } })).status).toBe(
        200,
      );
    }
  });

  it('refuses browsers from other origins unless configured, and answers their preflight', async () => {
    const evil = await raw(`${server.url}/computers`, {
      headers: { ...auth(), origin: 'http://evil.example' },
    });
    expect(evil.status).toBe(403);
    expect(evil.body.message).toContain('server.cors_origins');
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();

    const preflight = await raw(`${server.url}/computers`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.test:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://app.test:3000');
    expect(preflight.headers['access-control-allow-headers']).toContain('authorization');

    const allowed = await raw(`${server.url}/computers`, {
      headers: { ...auth(), origin: 'http://app.test:3000' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('http://app.test:3000');

    // The UI at /ui/ is the same origin.
    const same = await raw(`${server.url}/computers`, {
      headers: { ...auth(), origin: server.url },
    });
    expect(same.status).toBe(200);
  });
});

describe('organization isolation on every route with an id', () => {
  let server: TestServer;
  let other: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'benchtop-isolation-'));
    const script = join(dir, 'slow.json');
    writeFileSync(script, JSON.stringify({ delay_ms: 60_000, turns: [] }));
    server = await startTestServer({
      models: { default: 'slow', providers: { slow: { provider: 'scripted', script } } },
    });
    other = server.core.keys.create('other').key;
    const persistent = (await server.request('POST', '/computers', { persistent: true })).body;
    await server.request('DELETE', `/computers/${persistent.id}`);
    ids.environment = persistent.id;
    ids.computer = (await server.request('POST', '/computers', {})).body.id;
    ids.tab = (
      await server.request('GET', `/computers/${ids.computer}/tabs`)
    ).body.result.tabs[0].id;
    ids.response = (
      await server.request('POST', '/v1/responses', { input: 'x', background: true })
    ).body.id;
    ids.task = (
      await server.request('POST', '/agent/tasks', { instruction: 'x', computer_id: ids.computer })
    ).body.task_id;
    ids.key = server.core.keys.create('local').info.id;
  });
  afterAll(() => server.close());

  it("answers another organization's key with 404 for our computers, tabs, streams, responses, tasks, environments and keys", async () => {
    const withIds = ROUTES.filter((route) => /:(id|tab_id)/.test(route));
    for (const route of withIds) {
      const [method, template] = route.split(' ') as [string, string];
      const id = template.startsWith('/v1/responses')
        ? ids.response
        : template.startsWith('/agent/tasks')
          ? ids.task
          : template.startsWith('/environments')
            ? ids.environment
            : template.startsWith('/keys')
              ? ids.key
              : ids.computer;
      const path = template.replace(':id', id!).replace(':tab_id', ids.tab!);
      const body = VALID_BODY[route] ?? (method === 'POST' ? {} : undefined);
      const answer = await server.request(method, path, body, { key: other });
      expect(answer.status, `${route}: ${answer.text.slice(0, 200)}`).toBe(404);
      expect(answer.text).not.toContain(server.key);
    }
    // Ours are all still there.
    expect((await server.request('GET', `/computers/${ids.computer}`)).body.status).toBe('running');
    expect((await server.request('GET', `/agent/tasks/${ids.task}`)).body.status).toBe('running');
    expect((await server.request('GET', `/v1/responses/${ids.response}`)).status).toBe(200);
    expect(server.core.keys.verify(server.key)).toBeDefined();
  });
});

describe('file-serving routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('never serves a file outside the UI folder or the screenshot store', async () => {
    const attempts = [
      '/ui/..%2f..%2fpackage.json',
      '/ui/%2e%2e/%2e%2e/package.json',
      '/ui/..%5c..%5cpackage.json',
      '/ui/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/screenshots/..%2f..%2fkeys.json/x.png',
      `/screenshots/comp_x/..%2f..%2f..%2fkeys.json`,
    ];
    for (const path of attempts) {
      const answer = await raw(`${server.url}${path}`, {});
      expect([400, 401, 403, 404], `${path} → ${answer.status}`).toContain(answer.status);
      expect(JSON.stringify(answer.body ?? '')).not.toMatch(/"(name|hash)"|root:/);
    }
  });
});
