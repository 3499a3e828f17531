import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** GET/POST /keys and DELETE /keys/{id} through the real server, as the settings screen uses them. */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

const works = async (key: string) =>
  (await server.request('GET', '/computers', undefined, { key })).status;

describe('keys', () => {
  it('POST /keys answers a working key once; GET /keys lists it without it, newest first', async () => {
    const first = await server.request('POST', '/keys');
    const second = await server.request('POST', '/keys', {});
    for (const created of [first, second]) {
      expect(created.status, created.text).toBe(200);
      expect(created.body).toEqual({
        key: expect.stringMatching(/^sk_/),
        id: expect.stringMatching(/^key_/),
        org: 'local',
        prefix: created.body.key.slice(0, 7),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*\.\d{3}Z$/),
        revoked_at: null,
      });
      expect(await works(created.body.key)).toBe(200);
    }

    const listed = await server.request('GET', '/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.map((key: { id: string }) => key.id)).toEqual([
      second.body.id,
      first.body.id,
    ]);
    expect(listed.body[0]).toEqual({ ...second.body, key: undefined });
    expect(Object.keys(listed.body[0]).sort()).toEqual(
      ['created_at', 'id', 'org', 'prefix', 'revoked_at'].sort(),
    );
    // The test server's own key comes from the environment: not stored, not listed.
    expect(listed.text).not.toContain('key_env');
    for (const created of [first, second]) {
      expect(listed.text).not.toContain(created.body.key);
      expect(readFileSync(join(server.dataDir, 'keys.json'), 'utf8')).not.toContain(
        created.body.key,
      );
    }
  });

  it('DELETE /keys/{id} revokes at once: the next request with the key is 401', async () => {
    const { body: created } = await server.request('POST', '/keys');
    expect(await works(created.key)).toBe(200);
    const revoked = await server.request('DELETE', `/keys/${created.id}`);
    expect(revoked.status, revoked.text).toBe(204);
    expect(revoked.text).toBe('');
    const refused = await server.request('GET', '/computers', undefined, { key: created.key });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('unauthorized');
    const listed = await server.request('GET', '/keys');
    const entry = listed.body.find((key: { id: string }) => key.id === created.id);
    expect(entry.revoked_at).toMatch(/Z$/);
    expect((await server.request('DELETE', `/keys/${created.id}`)).status).toBe(204);
    const unknown = await server.request('DELETE', '/keys/key_doesnotexist');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it('a key can revoke itself', async () => {
    const { body: created } = await server.request('POST', '/keys');
    const revoked = await server.request('DELETE', `/keys/${created.id}`, undefined, {
      key: created.key,
    });
    expect(revoked.status).toBe(204);
    expect(await works(created.key)).toBe(401);
  });

  it('another organization sees and revokes only its own keys, and is refused settings', async () => {
    const { body: ours } = await server.request('POST', '/keys');
    const other = server.core.keys.create('acme').key;

    const theirs = await server.request('POST', '/keys', undefined, { key: other });
    expect(theirs.status).toBe(200);
    expect(theirs.body.org).toBe('acme');
    expect(await works(theirs.body.key)).toBe(200);

    const listed = await server.request('GET', '/keys', undefined, { key: other });
    expect(listed.body.map((key: { org: string }) => key.org)).toEqual(['acme', 'acme']);
    expect(listed.text).not.toContain(ours.id);
    const ourList = await server.request('GET', '/keys');
    expect(ourList.text).not.toContain(theirs.body.id);

    const attempt = await server.request('DELETE', `/keys/${ours.id}`, undefined, { key: other });
    expect(attempt.status).toBe(404);
    expect(attempt.body.code).toBe('not_found');
    expect(await works(ours.key)).toBe(200);

    const settings = await server.request('GET', '/settings', undefined, { key: other });
    expect(settings.status).toBe(403);
    expect(settings.body.code).toBe('forbidden');
  });
});
