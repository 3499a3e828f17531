import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/main/core/store/key-store.js';

const dataDir = () => mkdtempSync(join(tmpdir(), 'benchtop-keys-'));

describe('key store', () => {
  it('stores keys hashed and verifies them for their organization', () => {
    const dir = dataDir();
    const store = new KeyStore(dir);
    const { key, info } = store.create('acme');
    expect(key).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
    expect(store.verify(key)).toEqual({ org: 'acme', keyId: info.id, keyPrefix: key.slice(0, 7) });
    expect(store.verify(`${key}x`)).toBeUndefined();
    expect(store.verify('not-a-key')).toBeUndefined();
    const file = readFileSync(join(dir, 'keys.json'), 'utf8');
    expect(file).not.toContain(key);
    expect(file).toContain(info.prefix);
    expect(store.list()).toEqual([info]);
    store.close();
  });

  it('revokes at once, also when another process revokes', async () => {
    const dir = dataDir();
    const server = new KeyStore(dir, { watch: true });
    const { key, info } = server.create('local');
    const cli = new KeyStore(dir);
    expect(cli.revoke(info.id)).toBe(true);
    expect(cli.revoke('key_unknown')).toBe(false);
    const deadline = Date.now() + 3000;
    while (server.verify(key) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.verify(key)).toBeUndefined();
    expect(cli.list()[0]!.revoked_at).toMatch(/Z$/);
    server.close();
    cli.close();
  });

  it('trusts a key from the environment without storing it', () => {
    const dir = dataDir();
    const store = new KeyStore(dir);
    store.trustKey('sk_from_the_environment_1234', 'local');
    expect(store.verify('sk_from_the_environment_1234')).toEqual({
      org: 'local',
      keyId: 'key_env',
      keyPrefix: 'sk_from',
    });
    expect(store.hasStoredKeys()).toBe(false);
    expect(() => store.trustKey('short', 'local')).toThrow(/BENCHTOP_API_KEY must look like sk_/);
    store.close();
  });
});
