import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, VALID_BODY } from '../helpers/routes.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The audit of organization isolation: with the first organization's computer, environment,
 * screenshot, responses, task and key in place, every route of the API is called with a second
 * organization's key. On the first organization's ids the answer is 404 (403 for the owner's
 * settings), never a success and never a 5xx; lists are empty; no answer carries an id or any
 * data of the first organization (beyond the id the request itself named).
 */

type Route = (typeof ROUTES)[number];
type Call = { method: string; path: string; body?: unknown };
type Answer = { status: number; text: string; body: any };
type Case = Call & { statuses: number[]; check?: (answer: Answer) => void };

const SECRET = `secret-${randomBytes(8).toString('hex')}`;

let server: TestServer;
let other: string;
const ours: Record<
  'computer' | 'tab' | 'environment' | 'screenshot' | 'running' | 'done' | 'task' | 'key',
  string
> = {
  computer: '',
  tab: '',
  environment: '',
  screenshot: '',
  running: '',
  done: '',
  task: '',
  key: '',
};

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-org-isolation-'));
  const script = (name: string, delayMs: number) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns: [] }));
    return { provider: 'scripted' as const, script: path };
  };
  server = await startTestServer({
    models: {
      default: 'slow',
      providers: { slow: script('slow', 60_000), done: script('done', 0) },
    },
  });
  // The second organization's key, made as `benchtop keys create --org other` makes it.
  other = server.core.keys.create('other').key;
  const secret = await server.request('POST', '/secrets', { name: 'OUR_SECRET', value: SECRET });
  expect(secret.status, secret.text).toBe(200);

  const persistent = (await server.request('POST', '/computers', { persistent: true })).body;
  expect((await server.request('DELETE', `/computers/${persistent.id}`)).status).toBe(204);
  ours.environment = persistent.id;
  ours.computer = (await server.request('POST', '/computers', {})).body.id;
  ours.tab = (
    await server.request('GET', `/computers/${ours.computer}/tabs`)
  ).body.result.tabs[0].id;
  const shot = await server.request('POST', `/computers/${ours.computer}/screenshot`, {});
  ours.screenshot = shot.body.result.screenshot_url;
  ours.running = (
    await server.request('POST', '/v1/responses', { input: SECRET, background: true })
  ).body.id;
  const done = await server.request('POST', '/v1/responses', { model: 'done', input: SECRET });
  expect(done.body.status).toBe('completed');
  ours.done = done.body.id;
  ours.task = (
    await server.request('POST', '/agent/tasks', {
      instruction: SECRET,
      computer_id: ours.computer,
    })
  ).body.task_id;
  ours.key = (await server.request('POST', '/keys', {})).body.id;
  for (const value of Object.values(ours)) expect(value).toBeTruthy();
});
afterAll(() => server?.close());

/** One call with the second organization's key; a stream is cut after its status line. */
async function call({ method, path, body }: Call): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${other}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const type = response.headers.get('content-type') ?? '';
  if (/event-stream|ndjson|multipart/.test(type)) {
    // A stream that opened is the answer; what it sent first is read for leaks.
    const reader = response.body!.getReader();
    const first = await Promise.race([
      reader.read(),
      new Promise<{ value?: undefined }>((resolve) => setTimeout(() => resolve({}), 1000)),
    ]);
    await reader.cancel();
    return {
      status: response.status,
      text: first.value ? Buffer.from(first.value).toString('utf8') : '',
      body: undefined,
    };
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // An image or an empty 204.
  }
  return { status: response.status, text, body: parsed };
}

/** What the second organization sends on each route, and what it must get. */
function casesFor(route: Route): Case[] {
  const [method, template] = route.split(' ') as [string, string];
  const idFor = template.startsWith('/v1/responses')
    ? ours.running
    : template.startsWith('/agent/tasks')
      ? ours.task
      : template.startsWith('/environments')
        ? ours.environment
        : template.startsWith('/keys')
          ? ours.key
          : ours.computer;
  const path = template.replace(':id', idFor).replace(':tab_id', ours.tab);
  const body = VALID_BODY[route] ?? (method === 'POST' ? {} : undefined);
  const empty = (answer: Answer) => expect(answer.body).toEqual([]);
  switch (route) {
    case 'GET /health':
    case 'GET /openapi.json':
    case 'GET /v1/models':
      return [{ method, path, statuses: [200] }];
    case 'GET /screenshots/:computer/:file':
      // A screenshot URL is its own key (24 random bytes); a guessed one is nothing.
      return [
        {
          method,
          path: `/screenshots/${ours.computer}/${randomBytes(24).toString('base64url')}.png`,
          statuses: [404],
        },
      ];
    case 'POST /computers':
      // Restoring our environment into their computer.
      return [
        { method, path, body: { environment_id: ours.environment }, statuses: [400, 404] },
        {
          method,
          path,
          body: { persistent: true, environment_id: ours.environment },
          statuses: [400, 404],
        },
      ];
    case 'GET /computers':
      return [
        { method, path, statuses: [200], check: empty },
        { method, path: '/computers?type=persistent', statuses: [200], check: empty },
      ];
    case 'POST /v1/responses':
      // Continuing our conversation, finished or running.
      return [ours.done, ours.running].map((previous) => ({
        method,
        path,
        body: { model: 'done', input: 'go on', previous_response_id: previous },
        statuses: [404],
      }));
    case 'GET /v1/responses/:id':
      return [
        { method, path, statuses: [404] },
        { method, path: `/v1/responses/${ours.done}`, statuses: [404] },
      ];
    case 'DELETE /v1/responses/:id':
      return [
        { method, path, statuses: [404] },
        { method, path: `/v1/responses/${ours.done}`, statuses: [404] },
      ];
    case 'POST /v1/chat/completions':
      return [
        {
          method,
          path,
          body: { model: 'done', messages: [{ role: 'user', content: 'hi' }] },
          statuses: [200, 400],
        },
      ];
    case 'POST /agent/tasks':
    case 'POST /agent/tasks/stream':
      // A task on our computer, or on a computer restored from our environment.
      return [
        { method, path, body: { instruction: 'x', computer_id: ours.computer }, statuses: [404] },
        {
          method,
          path,
          body: { instruction: 'x', environment_id: ours.environment },
          statuses: [400, 404],
        },
      ];
    case 'GET /agent/tasks':
      return [{ method, path, statuses: [200], check: empty }];
    case 'GET /recordings':
      return [
        { method, path, statuses: [200], check: (answer) => expect(answer.body.data).toEqual([]) },
      ];
    case 'GET /keys':
      return [
        {
          method,
          path,
          statuses: [200],
          check: (answer) => {
            expect(answer.body.length).toBeGreaterThan(0);
            for (const key of answer.body) expect(key.org).toBe('other');
          },
        },
      ];
    case 'POST /keys':
      return [
        { method, path, body: {}, statuses: [200], check: (a) => expect(a.body.org).toBe('other') },
      ];
    case 'GET /settings':
      return [{ method, path, statuses: [403] }];
    // Policies are the machine's: every key reads them, only the owner's set them.
    case 'GET /policies':
      return [{ method, path, statuses: [200] }];
    case 'PUT /policies':
      return [{ method, path, body: [], statuses: [403] }];
    // The machine's backends are everyone's to read; our computers are not counted for them.
    case 'GET /backends':
      return [
        {
          method,
          path,
          statuses: [200],
          check: (answer) => expect(answer.body).toEqual([expect.objectContaining({ running: 0 })]),
        },
      ];
    case 'GET /approvals':
    case 'GET /attention':
      return [{ method, path, statuses: [200], check: empty }];
    case 'POST /attention/dismiss':
      return [{ method, path, body: { task_id: ours.task }, statuses: [404] }];
    case 'GET /secrets':
      return [
        {
          method,
          path,
          statuses: [200],
          check: (answer) =>
            expect(answer.body).toEqual([expect.objectContaining({ name: 'OUR_SECRET' })]),
        },
      ];
    // A secret of its own, under our secret's name: ours stays ours (checked below).
    case 'POST /secrets':
      return [
        { method, path, body: { name: 'OUR_SECRET', value: 'their own value' }, statuses: [200] },
      ];
    case 'DELETE /secrets/:name':
      return [{ method, path: '/secrets/OUR_SECRET', statuses: [204] }];
    case 'GET /v1/usage':
      // Our responses and task made model calls: none of their rows shows, by id or by filter.
      return [path, `${path}?response_id=${ours.done}`, `${path}?task_id=${ours.task}`].map(
        (filtered) => ({
          method,
          path: filtered,
          statuses: [200],
          check: (answer) => expect(answer.body).toMatchObject({ data: [], has_more: false }),
        }),
      );
    case 'GET /screencasts':
      return [{ method, path: `/screencasts?ids=${ours.computer}`, statuses: [404] }];
    case 'PATCH /settings':
      return [{ method, path, body: { limits: { max_tabs: 3 } }, statuses: [403] }];
    case 'POST /computers/:id/exec':
    case 'POST /computers/:id/exec/sync':
    case 'POST /computers/:id/debug':
      // Commands may be refused to the organization as a whole (403 exec_disabled), which says
      // nothing about our computer either.
      return [{ method, path, body, statuses: [403, 404] }];
    default:
      // Every other route names one of our objects in its path.
      expect(template, route).toMatch(/:id/);
      return [{ method, path, body, statuses: [404] }];
  }
}

describe('organization names that are also folder names', () => {
  it('an organization named ".", ".." or "" reaches no other organization\'s environments nor the data dir', async () => {
    for (const org of ['.', '..', '']) {
      const key = server.core.keys.create(org).key;
      const as = (method: string, path: string) => server.request(method, path, undefined, { key });
      const listed = await as('GET', '/computers?type=persistent');
      expect(listed.status, `${JSON.stringify(org)}: ${listed.text}`).toBe(200);
      expect(listed.body, JSON.stringify(org)).toEqual([]);
      // The first organization's folder of environments, and the data dir's own folders.
      for (const name of ['local', 'environments', 'workspaces', 'screenshots']) {
        const deleted = await as('DELETE', `/environments/${name}`);
        expect(deleted.status, `${JSON.stringify(org)} DELETE ${name}: ${deleted.text}`).toBe(404);
      }
    }
    const environments = (await server.request('GET', '/computers?type=persistent')).body;
    expect(environments.map((environment: { id: string }) => environment.id)).toContain(
      ours.environment,
    );
  });
});

describe('organization isolation, route by route', () => {
  it('the route table is the one the server documents', async () => {
    const document = (await server.request('GET', '/openapi.json')).body;
    const documented = Object.entries(document.paths as Record<string, object>).flatMap(
      ([path, operations]) =>
        Object.keys(operations).map(
          (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
        ),
    );
    expect([...documented].sort()).toEqual([...ROUTES].sort());
  });

  it("another organization's key gets 404 (403 for settings) on our ids, empty lists and none of our data, on every route", async () => {
    const ourValues = [...Object.values(ours), SECRET, server.key];
    const failures: string[] = [];
    for (const route of ROUTES) {
      for (const request of casesFor(route)) {
        const answer = await call(request);
        const label = `${route} (${request.method} ${request.path} ${JSON.stringify(request.body) ?? ''})`;
        if (!request.statuses.includes(answer.status)) {
          failures.push(`${label} → ${answer.status} ${answer.text.slice(0, 200)}`);
          continue;
        }
        const named = `${request.path} ${JSON.stringify(request.body) ?? ''}`;
        for (const value of ourValues) {
          if (!named.includes(value) && answer.text.includes(value)) {
            failures.push(`${label} → ${answer.status} carries "${value}"`);
          }
        }
        try {
          request.check?.(answer);
        } catch (error) {
          failures.push(`${label}: ${(error as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);

    // The second organization made nothing out of ours, and ours are all still there.
    const theirs = (path: string) =>
      server.request('GET', path, undefined, { key: other }).then((answer) => answer.body);
    expect(await theirs('/computers')).toEqual([]);
    expect(await theirs('/computers?type=persistent')).toEqual([]);
    expect(await theirs('/agent/tasks')).toEqual([]);
    // Their secret of the same name came and went; ours is as it was.
    expect(await theirs('/secrets')).toEqual([]);
    expect(server.core.vault.resolve('local', '{{secret:OUR_SECRET}}', 'text')).toBe(SECRET);
    expect((await server.request('GET', `/computers/${ours.computer}`)).body.status).toBe(
      'running',
    );
    expect((await server.request('GET', `/agent/tasks/${ours.task}`)).body.status).toBe('running');
    expect((await server.request('GET', `/v1/responses/${ours.running}`)).body.status).toBe(
      'in_progress',
    );
    expect((await server.request('GET', `/v1/responses/${ours.done}`)).body.status).toBe(
      'completed',
    );
    const environments = (await server.request('GET', '/computers?type=persistent')).body;
    expect(environments.map((environment: { id: string }) => environment.id)).toContain(
      ours.environment,
    );
    const keys = (await server.request('GET', '/keys')).body;
    expect(keys.find((key: { id: string }) => key.id === ours.key).revoked_at).toBeNull();
    expect((await server.request('GET', '/settings')).body.settings.limits.max_tabs).toBe(20);
    // Our screenshot URL itself still works: it is the capability, not the key.
    await eventually(async () => (await fetch(ours.screenshot)).status === 200);
  });
});
