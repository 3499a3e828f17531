import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';
import type { ActionResult } from '../../src/shared/actions.js';
import type { Computer, ComputerStatus } from '../../src/shared/computers.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { ROUTES } from '../helpers/routes.js';
import { SseReader } from '../helpers/sse.js';
import {
  eventually,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../helpers/test-server.js';

/** Computers: lifecycle, lifetimes, screenshots, limits, auth and organizations, OpenAPI. */

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STATUS_FIELDS = [
  'id',
  'status',
  'created_at',
  'last_activity_at',
  'expires_at',
  'idle_expires_at',
  'max_lifetime_seconds',
  'inactivity_timeout_seconds',
  'idle_timeout_enabled',
  'auto_kill',
];
/** A Computer carries every status field and these. */
const COMPUTER_FIELDS = [
  ...STATUS_FIELDS,
  'kind',
  'persistent',
  'environment_id',
  'context_id',
  'display',
  'endpoints',
];
/** Slack allowed past a lifetime deadline: the contract's one second plus scheduling noise. */
const DEADLINE_SLACK_MS = 1500;

let server: TestServer;
const created: Array<{ server: TestServer; id: string; key?: string }> = [];

const ms = (iso: string | null | undefined) => Date.parse(iso!);
/** Now, once the clock has passed a computer's last activity (stamped to the millisecond). */
const afterLastActivity = (computer: Computer) =>
  eventually(() => Date.now() > ms(computer.last_activity_at) && Date.now());
/** How long after its last activity a computer counts as idle. */
const idleSpan = (computer: Pick<Computer, 'idle_expires_at' | 'last_activity_at'>) =>
  ms(computer.idle_expires_at) - ms(computer.last_activity_at);

async function create(
  body: unknown = {},
  on: TestServer = server,
  key?: string,
): Promise<Computer> {
  const response = await on.request<Computer>('POST', '/computers', body, { key });
  expect(response.status, response.text).toBe(200);
  created.push({ server: on, id: response.body.id, key });
  return response.body;
}

async function get(id: string): Promise<Computer> {
  const response = await server.request<Computer>('GET', `/computers/${id}`);
  expect(response.status, response.text).toBe(200);
  return response.body;
}

function expectErrorBody(response: ApiResponse, status: number, code: string): void {
  const context = `${response.status} ${response.text}`;
  expect(response.status, context).toBe(status);
  expect(response.headers.get('content-type'), context).toMatch(/^application\/json/);
  const body = response.body as Record<string, unknown>;
  expect(body.code, context).toBe(code);
  expect(body.message, context).toBeTypeOf('string');
  expect((body.message as string).length, context).toBeGreaterThan(0);
  expect(body.request_id, context).toMatch(/^req_/);
}

/** Width and height from a PNG's IHDR chunk (bytes 16..24). */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

beforeAll(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  for (const { server: on, id, key } of created.splice(0)) {
    await on.request('DELETE', `/computers/${id}`, undefined, { key }).catch(() => {});
  }
});

afterAll(async () => {
  await server?.close();
});

describe('lifecycle', () => {
  it('create returns the full Computer object', async () => {
    const before = Date.now();
    const response = await server.request<Computer>('POST', '/computers', {});
    const after = Date.now();
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const computer = response.body;
    created.push({ server, id: computer.id });

    for (const field of COMPUTER_FIELDS) expect(computer, field).toHaveProperty(field);
    expect(computer.id).toMatch(/^comp_[A-Za-z0-9_-]+$/);
    expect(computer).toMatchObject({
      kind: 'browser',
      status: 'running',
      expires_at: null,
      max_lifetime_seconds: null,
      inactivity_timeout_seconds: 120,
      idle_timeout_enabled: true,
      auto_kill: true,
      persistent: false,
      environment_id: null,
      context_id: null,
      display: { width: 1280, height: 720, scale: 1 },
    });
    expect(computer).not.toHaveProperty('terminated_at');
    expect(computer).not.toHaveProperty('termination_reason');

    for (const field of ['created_at', 'last_activity_at', 'idle_expires_at'] as const) {
      expect(computer[field], field).toMatch(ISO_MS);
    }
    expect(ms(computer.created_at)).toBeGreaterThanOrEqual(before - 5);
    expect(ms(computer.created_at)).toBeLessThanOrEqual(after + 5);
    expect(ms(computer.last_activity_at)).toBeGreaterThanOrEqual(ms(computer.created_at));
    expect(ms(computer.idle_expires_at)).toBe(ms(computer.last_activity_at) + 120_000);

    const origin = new URL(server.url).origin;
    expect(Object.keys(computer.endpoints).sort()).toEqual(['events', 'live_view', 'screencast']);
    for (const [name, url] of Object.entries(computer.endpoints)) {
      expect(url, name).toMatch(/^https?:\/\//);
      expect(new URL(url).origin, name).toBe(origin);
      expect(url, name).toContain(computer.id);
    }
  });

  it('list is a bare array of full Computer objects of the running computers', async () => {
    const a = await create();
    const b = await create({ context_id: 'list-me' });
    const response = await server.request<Computer[]>('GET', '/computers');
    expect(response.status, response.text).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    const listed = response.body.filter((computer) => computer.id === a.id || computer.id === b.id);
    expect(listed).toHaveLength(2);
    for (const computer of listed)
      for (const field of COMPUTER_FIELDS) expect(computer, field).toHaveProperty(field);
    expect(listed.find((computer) => computer.id === b.id)?.context_id).toBe('list-me');

    const live = await server.request<Computer[]>('GET', '/computers?type=live');
    expect(live.body.map((computer) => computer.id)).toEqual(expect.arrayContaining([a.id, b.id]));

    expect((await server.request('DELETE', `/computers/${a.id}`)).status).toBe(204);
    const later = await server.request<Computer[]>('GET', '/computers');
    expect(later.body.map((computer) => computer.id)).not.toContain(a.id);
    expect(later.body.map((computer) => computer.id)).toContain(b.id);
  });

  it('GET /computers?type=persistent is a bare array', async () => {
    const response = await server.request<unknown>('GET', '/computers?type=persistent');
    expect(response.status, response.text).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
  });

  it('retrieve returns the same full object', async () => {
    const computer = await create({ context_id: 'ctx-retrieve' });
    const response = await server.request<Computer>('GET', `/computers/${computer.id}`);
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual(computer);
  });

  it('status has the lifetime fields', async () => {
    const computer = await create({ max_lifetime_seconds: 600, inactivity_timeout_seconds: 300 });
    const response = await server.request<ComputerStatus>(
      'GET',
      `/computers/${computer.id}/status`,
    );
    expect(response.status, response.text).toBe(200);
    for (const field of STATUS_FIELDS) expect(response.body, field).toHaveProperty(field);
    const status = response.body;
    expect(status).toMatchObject({
      id: computer.id,
      status: 'running',
      created_at: computer.created_at,
      max_lifetime_seconds: 600,
      inactivity_timeout_seconds: 300,
      idle_timeout_enabled: true,
      auto_kill: true,
    });
    expect(status.expires_at).toMatch(ISO_MS);
    expect(ms(status.expires_at)).toBe(ms(status.created_at) + 600_000);
    expect(status.idle_expires_at).toMatch(ISO_MS);
    expect(idleSpan(status)).toBe(idleSpan(computer));
  });

  it('keepalive counts as activity and moves idle_expires_at', async () => {
    const computer = await create();
    const before = await afterLastActivity(computer);
    const response = await server.request('POST', `/computers/${computer.id}/keepalive`);
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = response.body as { status: string; idle_expires_at: string };
    expect(body.status).toBe('running');
    expect(body.idle_expires_at).toMatch(ISO_MS);
    expect(ms(body.idle_expires_at)).toBeGreaterThanOrEqual(before + idleSpan(computer));

    const status = (await server.request<ComputerStatus>('GET', `/computers/${computer.id}/status`))
      .body;
    expect(status.idle_expires_at).toBe(body.idle_expires_at);
    expect(ms(status.last_activity_at)).toBeGreaterThanOrEqual(before);
  });

  it('an action counts as activity too', async () => {
    const computer = await create();
    const before = await afterLastActivity(computer);
    const click = await server.request<ActionResult>('POST', `/computers/${computer.id}/click`, {
      x: 5,
      y: 5,
    });
    expect(click.body.status, click.text).toBe('success');
    const status = await get(computer.id);
    expect(ms(status.last_activity_at)).toBeGreaterThanOrEqual(before);
    expect(idleSpan(status)).toBe(idleSpan(computer));
  });

  it('DELETE → 204, again → 204, unknown → 404', async () => {
    const computer = await create();
    const first = await server.request('DELETE', `/computers/${computer.id}`);
    expect(first.status, first.text).toBe(204);
    expect(first.text).toBe('');
    const again = await server.request('DELETE', `/computers/${computer.id}`);
    expect(again.status, again.text).toBe(204);
    expect(again.text).toBe('');
    const unknown = await server.request('DELETE', '/computers/comp_neverexisted0000000000');
    expectErrorBody(unknown, 404, 'not_found');
    expectErrorBody(
      await server.request('GET', '/computers/comp_neverexisted0000000000'),
      404,
      'not_found',
    );
  });

  it('a deleted computer stays retrievable as terminated/deleted, and actions on it are 404s that say why', async () => {
    const computer = await create();
    const before = Date.now();
    expect((await server.request('DELETE', `/computers/${computer.id}`)).status).toBe(204);

    const ended = await get(computer.id);
    expect(ended.status).toBe('terminated');
    expect(ended.termination_reason).toBe('deleted');
    expect(ended.terminated_at).toMatch(ISO_MS);
    expect(ms(ended.terminated_at)).toBeGreaterThanOrEqual(before - 5);
    for (const field of COMPUTER_FIELDS) expect(ended, field).toHaveProperty(field);

    const status = await server.request<ComputerStatus>('GET', `/computers/${computer.id}/status`);
    expect(status.status).toBe(200);
    expect(status.body.status).toBe('terminated');

    const attempts: Array<[string, string, unknown]> = [
      ['POST', 'click', { x: 1, y: 1 }],
      ['POST', 'screenshot', {}],
      ['POST', 'execute', { action: { type: 'wait', ms: 0 } }],
      ['POST', 'batch', { actions: [{ type: 'wait', ms: 0 }] }],
      ['POST', 'keepalive', undefined],
      ['GET', 'tabs', undefined],
    ];
    for (const [method, segment, body] of attempts) {
      const response = await server.request(method, `/computers/${computer.id}/${segment}`, body);
      expectErrorBody(response, 404, 'not_found');
      expect((response.body as { message: string }).message, segment).toMatch(/deleted/);
    }
  });

  it('a computer ended on request says who asked: the client and its key, or a person in the window', async () => {
    const prefix = `key ${server.key.slice(0, 7)}…`;
    const bySdk = await create();
    const events = await SseReader.open(`${server.url}/computers/${bySdk.id}/events`, server.key);
    const ended = await server.request('DELETE', `/computers/${bySdk.id}`, undefined, {
      headers: SDK_HEADERS.currentPython,
    });
    expect(ended.status).toBe(204);
    expect((await get(bySdk.id)).ended_by).toBe(`Python SDK 2.39.0 (${prefix})`);
    const status = (await events.all()).map((event) => event.data as Record<string, unknown>);
    expect(status.at(-1)).toMatchObject({
      type: 'status',
      termination_reason: 'deleted',
      ended_by: `Python SDK 2.39.0 (${prefix})`,
    });

    const byWindow = await create();
    await server.request('DELETE', `/computers/${byWindow.id}`, undefined, {
      headers: { 'x-benchtop-source': 'live-view' },
    });
    expect((await get(byWindow.id)).ended_by).toBe(`a person in the window (${prefix})`);
  });

  it('context_id is echoed in create, retrieve and list', async () => {
    const computer = await create({ context_id: 'run-42/step-7' });
    expect(computer.context_id).toBe('run-42/step-7');
    expect((await get(computer.id)).context_id).toBe('run-42/step-7');
    const list = (await server.request<Computer[]>('GET', '/computers')).body;
    expect(list.find((item) => item.id === computer.id)?.context_id).toBe('run-42/step-7');
  });

  it('deprecated timeout_seconds sets max_lifetime_seconds', async () => {
    const computer = await create({ timeout_seconds: 300 });
    expect(computer.max_lifetime_seconds).toBe(300);
    expect(ms(computer.expires_at)).toBe(ms(computer.created_at) + 300_000);
    expect((await get(computer.id)).max_lifetime_seconds).toBe(300);
  });

  it('deprecated auto_kill:false disables the idle timeout, and auto_kill echoes idle_timeout_enabled', async () => {
    const computer = await create({ auto_kill: false });
    expect(computer.idle_timeout_enabled).toBe(false);
    expect(computer.auto_kill).toBe(false);
    expect(computer.idle_expires_at).toBeNull();
    const status = (await server.request<ComputerStatus>('GET', `/computers/${computer.id}/status`))
      .body;
    expect(status.idle_timeout_enabled).toBe(false);
    expect(status.auto_kill).toBe(false);

    const explicit = await create({ idle_timeout_enabled: false });
    expect(explicit.auto_kill).toBe(false);
    expect(explicit.idle_expires_at).toBeNull();
  });
});

describe('lifetimes', () => {
  it('inactivity_timeout_seconds: 1 ends the computer with idle_timeout within a second of the deadline', async () => {
    const computer = await create({ inactivity_timeout_seconds: 1 });
    expect(computer.inactivity_timeout_seconds).toBe(1);
    const ended = await eventually(async () => {
      const current = await get(computer.id);
      return current.status === 'terminated' && current;
    }, 5000);
    expect(ended.termination_reason).toBe('idle_timeout');
    expect(ended).not.toHaveProperty('ended_by');
    const deadline = ms(ended.last_activity_at) + 1000;
    const late = ms(ended.terminated_at) - deadline;
    expect(late, `terminated ${late} ms after the idle deadline`).toBeGreaterThanOrEqual(0);
    expect(late, `terminated ${late} ms after the idle deadline`).toBeLessThanOrEqual(
      DEADLINE_SLACK_MS,
    );

    const click = await server.request('POST', `/computers/${computer.id}/click`, { x: 1, y: 1 });
    expectErrorBody(click, 404, 'not_found');
    expect((click.body as { message: string }).message).toMatch(/idle_timeout|idle|inactiv/);
    expect(
      (await server.request<Computer[]>('GET', '/computers')).body.map((item) => item.id),
    ).not.toContain(computer.id);
  });

  it('max_lifetime_seconds: 1 ends the computer with max_lifetime despite keepalives', async () => {
    const computer = await create({ max_lifetime_seconds: 1, inactivity_timeout_seconds: 1 });
    expect(computer.max_lifetime_seconds).toBe(1);
    expect(ms(computer.expires_at)).toBe(ms(computer.created_at) + 1000);
    let keepalives = 0;
    const ended = await eventually(async () => {
      const keepalive = await server.request('POST', `/computers/${computer.id}/keepalive`);
      if (keepalive.status === 200) {
        keepalives += 1;
        return false;
      }
      expectErrorBody(keepalive, 404, 'not_found');
      return get(computer.id);
    }, 5000);
    expect(keepalives).toBeGreaterThan(0);
    expect(ended.status).toBe('terminated');
    expect(ended.termination_reason).toBe('max_lifetime');
    const late = ms(ended.terminated_at) - ms(ended.expires_at);
    expect(late, `terminated ${late} ms after expires_at`).toBeGreaterThanOrEqual(0);
    expect(late, `terminated ${late} ms after expires_at`).toBeLessThanOrEqual(DEADLINE_SLACK_MS);

    const click = await server.request('POST', `/computers/${computer.id}/click`, { x: 1, y: 1 });
    expectErrorBody(click, 404, 'not_found');
    expect((click.body as { message: string }).message).toMatch(/max_lifetime|lifetime/);
  });
});

describe('display and screenshots', () => {
  it('display 800×600 gives screenshots of exactly 800×600, fetchable without a key', async () => {
    const computer = await create({ display: { width: 800, height: 600 } });
    expect(computer.display).toEqual({ width: 800, height: 600, scale: 1 });

    const shot = await server.request<ActionResult>(
      'POST',
      `/computers/${computer.id}/screenshot`,
      {},
    );
    expect(shot.status, shot.text).toBe(200);
    expect(shot.body.status).toBe('success');
    expect(shot.body.result).toMatchObject({ width: 800, height: 600 });
    const url = shot.body.result.screenshot_url as string;
    expect(url.startsWith(`${server.url}/`), url).toBe(true);

    const image = await fetch(url); // no Authorization header
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\/png/);
    expect(pngSize(Buffer.from(await image.arrayBuffer()))).toEqual({ width: 800, height: 600 });

    const inline = await server.request<ActionResult>(
      'POST',
      `/computers/${computer.id}/screenshot`,
      { base64: true },
    );
    expect(inline.body.status, inline.text).toBe('success');
    const base64 = inline.body.result.base64 as string;
    expect(inline.body.result.screenshot_url).toBe(`data:image/png;base64,${base64}`);
    expect(pngSize(Buffer.from(base64, 'base64'))).toEqual({ width: 800, height: 600 });
  });

  it('a garbage or guessed screenshot path is a 404, with or without a key', async () => {
    const computer = await create();
    const shot = await server.request<ActionResult>(
      'POST',
      `/computers/${computer.id}/screenshot`,
      {},
    );
    const real = new URL(shot.body.result.screenshot_url as string).pathname;
    expect((await fetch(`${server.url}${real}`)).status).toBe(200);

    const guesses = [
      '/screenshots/garbage',
      '/screenshots/comp_garbage/garbage.png',
      `/screenshots/${computer.id}/${'A'.repeat(32)}.png`,
      // The real token with its last character changed (any of the 64 it may be).
      real.replace(/.(?=\.png$)/, (c) => (c === 'A' ? 'B' : 'A')),
      `/screenshots/${computer.id}/${encodeURIComponent('../../keys.json')}`,
    ];
    for (const path of guesses) {
      const anonymous = await server.request('GET', path, undefined, { key: null });
      expectErrorBody(anonymous, 404, 'not_found');
      const keyed = await server.request('GET', path);
      expectErrorBody(keyed, 404, 'not_found');
    }
  });
});

describe('auth', () => {
  it('no Authorization header → 401 unauthorized with a top-level message', async () => {
    const response = await server.request('GET', '/computers', undefined, { key: null });
    expectErrorBody(response, 401, 'unauthorized');
    const creating = await server.request('POST', '/computers', {}, { key: null });
    expectErrorBody(creating, 401, 'unauthorized');
  });

  it('an unknown key → 401', async () => {
    const response = await server.request('GET', '/computers', undefined, {
      key: `sk_${'0'.repeat(40)}`,
    });
    expectErrorBody(response, 401, 'unauthorized');
    const malformed = await server.request('GET', '/computers', undefined, {
      key: null,
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    expectErrorBody(malformed, 401, 'unauthorized');
  });

  it('a revoked key → 401 at once', async () => {
    const { key, info } = server.core.keys.create('local');
    const ok = await server.request('GET', '/computers', undefined, { key });
    expect(ok.status, ok.text).toBe(200);
    expect(server.core.keys.revoke(info.id)).toBe(true);
    const revoked = await server.request('GET', '/computers', undefined, { key });
    expectErrorBody(revoked, 401, 'unauthorized');
  });

  it('/health and /openapi.json need no key', async () => {
    const health = await server.request('GET', '/health', undefined, { key: null });
    expect(health.status, health.text).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', version: expect.any(String) as unknown });
    const openapi = await server.request('GET', '/openapi.json', undefined, { key: null });
    expect(openapi.status, openapi.text).toBe(200);
  });
});

describe('organizations', () => {
  it("another organization's key sees 404 for our computer and does not list it", async () => {
    const ours = await create();
    const { key: other } = server.core.keys.create('other');
    const theirs = await create({}, server, other);

    const attempts: Array<[string, string, unknown]> = [
      ['GET', '', undefined],
      ['GET', '/status', undefined],
      ['POST', '/keepalive', undefined],
      ['POST', '/click', { x: 1, y: 1 }],
      ['POST', '/screenshot', {}],
      ['POST', '/execute', { action: { type: 'wait', ms: 0 } }],
      ['POST', '/batch', { actions: [{ type: 'wait', ms: 0 }] }],
      ['GET', '/tabs', undefined],
      ['POST', '/tabs', {}],
      ['DELETE', '', undefined],
    ];
    for (const [method, suffix, body] of attempts) {
      const response = await server.request(method, `/computers/${ours.id}${suffix}`, body, {
        key: other,
      });
      expectErrorBody(response, 404, 'not_found');
    }
    const tabs = (await server.request<ActionResult>('GET', `/computers/${ours.id}/tabs`)).body
      .result.tabs as Array<{
      tab_id: string;
    }>;
    const tab = tabs[0]!.tab_id;
    expectErrorBody(
      await server.request('POST', `/computers/${ours.id}/tabs/${tab}/switch`, undefined, {
        key: other,
      }),
      404,
      'not_found',
    );
    expectErrorBody(
      await server.request('DELETE', `/computers/${ours.id}/tabs/${tab}`, undefined, {
        key: other,
      }),
      404,
      'not_found',
    );

    const theirList = (
      await server.request<Computer[]>('GET', '/computers', undefined, { key: other })
    ).body;
    expect(theirList.map((computer) => computer.id)).toEqual([theirs.id]);
    const ourList = (await server.request<Computer[]>('GET', '/computers')).body;
    expect(ourList.map((computer) => computer.id)).toContain(ours.id);
    expect(ourList.map((computer) => computer.id)).not.toContain(theirs.id);

    // Nothing they tried touched it.
    const after = await get(ours.id);
    expect(after.status).toBe('running');
    expect(
      (await server.request<ActionResult>('GET', `/computers/${ours.id}/tabs`)).body.result.tabs,
    ).toHaveLength(1);
  });
});

describe('limits', () => {
  let limited: TestServer;

  beforeAll(async () => {
    limited = await startTestServer({ limits: { browsers_per_org: 1 } });
  });

  afterAll(async () => {
    await limited?.close();
  });

  it('a second browser over browsers_per_org → 429 concurrency_limit with Retry-After', async () => {
    const first = await create({}, limited);
    const second = await limited.request<Computer>('POST', '/computers', {});
    if (second.status === 200) created.push({ server: limited, id: second.body.id });
    expectErrorBody(second, 429, 'concurrency_limit');
    expect((second.body as unknown as { message: string }).message).toMatch(/\b1\b/);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(second.headers.get('retry-after-ms'))).toBeGreaterThan(0);

    // Another organization has its own allowance.
    const { key: other } = limited.core.keys.create('other');
    await create({}, limited, other);

    // Deleting the first frees the slot.
    expect((await limited.request('DELETE', `/computers/${first.id}`)).status).toBe(204);
    await create({}, limited);
  });

  it('creates racing each other cannot exceed browsers_per_org', async () => {
    // A display the warm pool does not hold, so each create takes as long as a new context.
    const body = { display: { width: 800, height: 600 } };
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => limited.request<Computer>('POST', '/computers', body)),
    );
    for (const response of responses)
      if (response.status === 200) created.push({ server: limited, id: response.body.id });
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses, 'four simultaneous creates with browsers_per_org 1').toEqual([
      200, 429, 429, 429,
    ]);
    const running = (await limited.request<Computer[]>('GET', '/computers')).body;
    expect(running, 'computers running after the race').toHaveLength(1);
  });
});

describe('Chromium installed while Benchtop runs', () => {
  it('a create that finds none says how to install it; the next create uses the one installed', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'benchtop-chromium-'));
    const executable = join(folder, 'chromium');
    const own = await startTestServer({ browser: { warm_pool: 0, executable_path: executable } });
    try {
      const refused = await own.request('POST', '/computers', {});
      expectErrorBody(refused, 503, 'unavailable');
      expect((refused.body as { message: string }).message).toBe(
        `Chromium not found at ${executable}: install Chromium (Debian/Ubuntu: apt-get install chromium) or set browser.executable_path`,
      );

      symlinkSync(findChromium(null, {}, { headless: true })!, executable);
      const computer = await create({}, own);
      const shot = await own.request<ActionResult>('POST', `/computers/${computer.id}/screenshot`);
      expect(shot.body.status, shot.text).toBe('success');
    } finally {
      await own.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('OpenAPI', () => {
  // The same route list the bad-input table covers, in OpenAPI's {param} form.
  const EXPECTED = ROUTES.map((route): [string, string] => {
    const [method, path] = route.split(' ') as [string, string];
    return [method.toLowerCase(), path.replace(/:(\w+)/g, '{$1}')];
  });

  type Schema = {
    $ref?: string;
    required?: string[];
    properties?: Record<string, Schema>;
    type?: string;
  };
  type Document = {
    openapi: string;
    paths: Record<
      string,
      Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>
    >;
    components?: { schemas?: Record<string, Schema> };
  };

  it('is OpenAPI 3.1 with every route the server has', async () => {
    const response = await server.request<Document>('GET', '/openapi.json', undefined, {
      key: null,
    });
    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    const missing = EXPECTED.filter(([method, path]) => !doc.paths[path]?.[method]).map((pair) =>
      pair.join(' '),
    );
    expect(missing).toEqual([]);
  });

  it('the click request schema requires x and y', async () => {
    const doc = (await server.request<Document>('GET', '/openapi.json', undefined, { key: null }))
      .body;
    let schema =
      doc.paths['/computers/{id}/click']?.post?.requestBody?.content['application/json']?.schema;
    if (schema?.$ref) schema = doc.components?.schemas?.[schema.$ref.split('/').pop()!];
    expect(schema?.required).toEqual(expect.arrayContaining(['x', 'y']));
    expect(schema?.properties?.x?.type).toBe('number');
    expect(schema?.properties?.y?.type).toBe('number');
  });
});
