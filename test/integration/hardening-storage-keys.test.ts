import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/main/core/store/key-store.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * What one organization's keys can no longer do to the machine or to other organizations: fill
 * the disk with stored responses and tasks, mint keys without end, or read Benchtop's files as
 * another user of the machine.
 */

const scratch = mkdtempSync(join(tmpdir(), 'benchtop-hardening-'));
const doneScript = join(scratch, 'done.json');
writeFileSync(doneScript, JSON.stringify({ delay_ms: 0, turns: [] }));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The database file read as it is on disk. */
function readDb<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'benchtop.sqlite'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const rowsOf = (dataDir: string, org: string) =>
  readDb(
    dataDir,
    (db) =>
      (db.prepare('SELECT COUNT(*) AS n FROM responses WHERE org = ?').get(org) as { n: number }).n,
  );

/** The running totals the quota reads, against the same sums computed from every row. */
function usage(dataDir: string): { kept: Record<string, number>; counted: Record<string, number> } {
  return readDb(dataDir, (db) => {
    const kept = Object.fromEntries(
      (
        db.prepare('SELECT org, bytes FROM org_usage').all() as Array<{
          org: string;
          bytes: number;
        }>
      )
        .filter((row) => row.bytes !== 0)
        .map((row) => [row.org, row.bytes]),
    );
    const rows = db
      .prepare(
        `SELECT org, SUM(bytes) AS bytes FROM (
           SELECT org, octet_length(body) + octet_length(input) + ifnull(octet_length(state), 0)
             + octet_length(open_calls) AS bytes FROM responses
           UNION ALL SELECT org, octet_length(body) FROM tasks
           UNION ALL SELECT t.org, octet_length(e.body) FROM task_events e
             JOIN tasks t ON t.id = e.task_id)
         GROUP BY org`,
      )
      .all() as Array<{ org: string; bytes: number }>;
    return { kept, counted: Object.fromEntries(rows.map((row) => [row.org, row.bytes])) };
  });
}

describe('storage per organization', () => {
  let server: TestServer;
  let fake: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  let other: string;

  beforeAll(async () => {
    fake = await startFakeChatCompletions();
    server = await startTestServer({
      limits: { stored_bytes_per_org: 40_000, max_input_bytes: 16_000 },
      models: {
        default: 'vlm',
        providers: { vlm: { provider: 'openai-compatible', base_url: fake.url, model: 'fake' } },
      },
    });
    other = server.core.keys.create('other').key;
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  const respond = (input: string, key: string) => {
    fake.reply({ json: chatCompletion({ content: 'ok' }) });
    return server.request('POST', '/v1/responses', { input }, { key });
  };

  it('refuses an input over limits.max_input_bytes with 413 before storing it or asking the model', async () => {
    const calls = fake.requests.length;
    const answer = await server.request('POST', '/v1/responses', { input: 'y'.repeat(20_000) });
    expect(answer.status, answer.text).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
    expect(answer.body.message).toContain('limits.max_input_bytes');
    expect(fake.requests.length).toBe(calls);
    expect(rowsOf(server.dataDir, 'local')).toBe(0);
  });

  it('stops an organization at limits.stored_bytes_per_org with 429 quota_exceeded; other organizations go on', async () => {
    const accepted: string[] = [];
    let refused;
    for (let i = 0; i < 12 && !refused; i++) {
      const answer = await respond('x'.repeat(8_000), other);
      if (answer.status === 200) accepted.push(answer.body.id);
      else refused = answer;
    }
    expect(accepted.length).toBeGreaterThanOrEqual(3);
    expect(refused?.status, refused?.text).toBe(429);
    expect(refused!.body.code).toBe('quota_exceeded');
    expect(refused!.body.message).toContain('limits.stored_bytes_per_org');
    expect(refused!.body.message).toContain('"other"');

    // Nothing was stored and the model was not asked.
    const calls = fake.requests.length;
    const rows = rowsOf(server.dataDir, 'other');
    expect(rows).toBe(accepted.length);
    const again = await server.request(
      'POST',
      '/v1/responses',
      { input: 'x'.repeat(8_000) },
      { key: other },
    );
    expect(again.body.code).toBe('quota_exceeded');
    expect(fake.requests.length).toBe(calls);
    expect(rowsOf(server.dataDir, 'other')).toBe(rows);

    // A task is refused the same way, and the computer made for it does not stay.
    const task = await server.request(
      'POST',
      '/agent/tasks',
      { instruction: 'z'.repeat(15_000) },
      { key: other },
    );
    expect(task.status, task.text).toBe(429);
    expect(task.body.code).toBe('quota_exceeded');
    expect((await server.request('GET', '/computers', undefined, { key: other })).body).toEqual([]);

    // The owner's organization is not held back by another's use.
    expect((await respond('x'.repeat(8_000), server.key)).status).toBe(200);

    // Deleting what it stores makes room again.
    expect(
      (await server.request('DELETE', `/v1/responses/${accepted[0]}`, undefined, { key: other }))
        .status,
    ).toBe(200);
    expect((await respond('x'.repeat(8_000), other)).status).toBe(200);

    // The running totals the check reads match what is stored, row by row.
    const { kept, counted } = usage(server.dataDir);
    expect(kept).toEqual(counted);
    expect(counted.other).toBeLessThanOrEqual(40_000 + 2_000);
  });
});

describe('screenshots per computer', () => {
  it('keeps the newest limits.screenshots_per_computer of a computer; older URLs answer 404', async () => {
    const server = await startTestServer({ limits: { screenshots_per_computer: 2 } });
    try {
      const computer = (await server.request('POST', '/computers', {})).body.id as string;
      const urls: string[] = [];
      for (let i = 0; i < 4; i++) {
        const shot = await server.request('POST', `/computers/${computer}/screenshot`, {});
        expect(shot.body.status, shot.text).toBe('success');
        urls.push(shot.body.result.screenshot_url);
      }
      const statuses = await Promise.all(urls.map(async (url) => (await fetch(url)).status));
      expect(statuses).toEqual([404, 404, 200, 200]);
      expect(readdirSync(join(server.dataDir, 'screenshots', computer))).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

describe('retention', () => {
  it('deletes responses and finished tasks older than limits.retention_days at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-retention-'));
    const models = {
      default: 'done',
      providers: { done: { provider: 'scripted' as const, script: doneScript } },
    };
    const first = await startTestServer({ models }, { dataDir });
    let old: string, kept: string, task: string;
    try {
      old = (await first.request('POST', '/v1/responses', { input: 'old' })).body.id;
      kept = (await first.request('POST', '/v1/responses', { input: 'recent' })).body.id;
      task = (await first.request('POST', '/agent/tasks', { instruction: 'finish' })).body.task_id;
      await eventually(
        async () =>
          (await first.request('GET', `/agent/tasks/${task}`)).body.status === 'completed',
        20_000,
      );
    } finally {
      await first.close();
    }
    // Forty days pass for the old response and the task (the task's own responses with it).
    const db = new Database(join(dataDir, 'benchtop.sqlite'));
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000).toISOString();
    db.prepare('UPDATE responses SET created_at = ? WHERE id = ?').run(longAgo, old);
    db.prepare('UPDATE tasks SET created_at = ? WHERE id = ?').run(longAgo, task);
    expect(
      (
        db.prepare('SELECT COUNT(*) AS n FROM task_events WHERE task_id = ?').get(task) as {
          n: number;
        }
      ).n,
    ).toBeGreaterThan(0);
    db.close();

    const second = await startTestServer({ models }, { dataDir });
    try {
      await eventually(
        async () => (await second.request('GET', `/v1/responses/${old}`)).status === 404,
      );
      expect((await second.request('GET', `/agent/tasks/${task}`)).status).toBe(404);
      expect((await second.request('GET', `/agent/tasks/${task}/events`)).status).toBe(404);
      expect((await second.request('GET', `/v1/responses/${kept}`)).status).toBe(200);
      const events = readDb(
        dataDir,
        (read) =>
          (
            read.prepare('SELECT COUNT(*) AS n FROM task_events WHERE task_id = ?').get(task) as {
              n: number;
            }
          ).n,
      );
      expect(events).toBe(0);
      const { kept: totals, counted } = usage(dataDir);
      expect(totals).toEqual(counted);
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('keys per organization', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: { keys_per_org: 3, key_creations_per_minute: 4 } });
  });
  afterAll(() => server?.close());

  it('caps unrevoked keys at limits.keys_per_org with 429 quota_exceeded saying to revoke one', async () => {
    const other = server.core.keys.create('other').key;
    const create = () => server.request('POST', '/keys', {}, { key: other });
    const made = [await create(), await create()];
    for (const answer of made) expect(answer.status, answer.text).toBe(200);
    const refused = await create();
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe('quota_exceeded');
    expect(refused.body.message).toContain('limits.keys_per_org');
    expect(refused.body.message).toMatch(/revoke/);
    expect((await server.request('GET', '/keys', undefined, { key: other })).body).toHaveLength(3);

    // Revoking one makes room; revoked keys do not count.
    const revoked = await server.request('DELETE', `/keys/${made[0]!.body.id}`, undefined, {
      key: other,
    });
    expect(revoked.status).toBe(204);
    expect((await create()).status).toBe(200);
    expect((await create()).body.code).toBe('quota_exceeded');
    // Another organization is not held back by it.
    expect((await server.request('POST', '/keys', {})).status).toBe(200);
  });

  it('throttles POST /keys to limits.key_creations_per_minute per organization with Retry-After', async () => {
    const third = server.core.keys.create('third').key;
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const answer = await server.request('POST', '/keys', {}, { key: third });
      answers.push(answer);
      // Revoked at once, so only the pace is limited, not the count.
      if (answer.status === 200) {
        await server.request('DELETE', `/keys/${answer.body.id}`, undefined, { key: third });
      }
    }
    expect(answers.slice(0, 4).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const limited = answers[4]!;
    expect(limited.status, limited.text).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(limited.body.message).toContain('limits.key_creations_per_minute');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Per organization: the owner's organization still creates keys.
    expect((await server.request('POST', '/keys', {})).status).toBe(200);
  });

  it('`benchtop keys create` (the owner at the machine) is held to neither, and says when an organization goes over', () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'benchtop.js');
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('BENCHTOP_')),
    );
    // "other" has 3 unrevoked keys, the most its keys may have.
    const result = spawnSync(process.execPath, [bin, 'keys', 'create', '--org', 'other'], {
      env: { ...env, BENCHTOP_DATA_DIR: server.dataDir, BENCHTOP_LIMITS_KEYS_PER_ORG: '3' },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    const key = /^sk_\S+$/m.exec(result.stdout)?.[0];
    expect(key, result.stdout).toBeDefined();
    expect(result.stdout).toContain('limits.keys_per_org');
    const stored = new KeyStore(server.dataDir);
    expect(stored.verify(key!)).toMatchObject({ org: 'other' });
    expect(stored.liveCount('other')).toBe(4);
    stored.close();
  });
});

describe('file modes in the data dir', () => {
  it('leaves nothing readable by group or others: folders 0700, files 0600', async () => {
    // An existing data dir made with the usual umask, as an earlier version left it.
    const parent = mkdtempSync(join(tmpdir(), 'benchtop-modes-'));
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const server = await startTestServer(
      {
        limits: { auth_failures_before_block: 2 },
        models: {
          default: 'done',
          providers: { done: { provider: 'scripted', script: doneScript } },
        },
      },
      { dataDir },
    );
    try {
      expect((await server.request('POST', '/keys', {})).status).toBe(200);
      expect((await server.request('PATCH', '/settings', { limits: { max_tabs: 9 } })).status).toBe(
        200,
      );
      const computer = (await server.request('POST', '/computers', { persistent: true })).body;
      expect(computer.id).toMatch(/^comp_/);
      const shot = await server.request('POST', `/computers/${computer.id}/screenshot`, {});
      expect(shot.body.status, shot.text).toBe('success');
      expect((await server.request('POST', '/v1/responses', { input: 'hi' })).status).toBe(200);
      // A second computer keeps its workspace and screenshots while the first is saved.
      const running = (await server.request('POST', '/computers', {})).body.id as string;
      await server.request('POST', `/computers/${running}/screenshot`, {});
      expect((await server.request('DELETE', `/computers/${computer.id}`)).status).toBe(204);
      const listed = await server.request('GET', '/computers?type=persistent');
      expect(listed.body.map((environment: { id: string }) => environment.id)).toContain(
        computer.id,
      );
      // Two failed authentications block the address: ip-blocks.json is written.
      for (const bad of ['sk_wrong_aaaaaaaaaaaaaaaaaaaa', 'sk_wrong_bbbbbbbbbbbbbbbbbbbb']) {
        await server.request('GET', '/computers', undefined, { key: bad });
      }
      server.core.guards.failures.lift('127.0.0.1');

      const wide: string[] = [];
      const seen: string[] = [];
      const walk = (path: string) => {
        const info = lstatSync(path);
        seen.push(path.slice(dataDir.length) || '/');
        if (info.mode & 0o077)
          wide.push(`${path.slice(dataDir.length) || '/'} ${(info.mode & 0o777).toString(8)}`);
        if (info.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
      };
      walk(dataDir);
      expect(wide).toEqual([]);
      // What the walk covered: the database with its WAL, keys, settings, blocks, a saved
      // environment, a workspace and screenshots.
      for (const part of [
        '/benchtop.sqlite',
        '/benchtop.sqlite-wal',
        '/keys.json',
        '/config.json',
        '/ip-blocks.json',
        `/environments/local/${computer.id}/storage-state.json`,
        `/workspaces/${running}`,
        `/screenshots/${running}/`,
      ]) {
        expect(
          seen.some((path) => path.startsWith(part)),
          `${part} in ${seen.join(', ')}`,
        ).toBe(true);
      }
    } finally {
      server.core.guards.failures.lift('127.0.0.1');
      await server.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
