import { createHash, randomBytes } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import type Conf from 'conf';
import { openConfFile } from './conf-file.js';
import { newId, now } from '../ids.js';
import { PRIVATE_FILE } from './private-files.js';

export type KeyRecord = {
  id: string;
  org: string;
  /** sha256 of the key; the key itself is never stored. */
  hash: string;
  /** First characters, so a person can tell keys apart in a list. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
};

export type KeyInfo = Omit<KeyRecord, 'hash'>;
/** Whose key a request carries: its organization, and the key's id and prefix (`sk_5bRW`). */
export type Principal = { org: string; keyId: string; keyPrefix: string };

const KEY_PATTERN = /^sk_[A-Za-z0-9_-]{16,200}$/;
const KNOWN_HASHES = 64;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * API keys, stored hashed in keys.json (conf's format). With `watch`, the data dir is watched
 * (inotify, not conf's 5 s polling), so a key revoked by the CLI in another process stops working
 * here at once.
 */
export class KeyStore {
  private readonly conf: Conf<{ keys: KeyRecord[] }>;
  private byHash = new Map<string, KeyRecord>();
  /** Keys trusted from the environment: valid while this process runs, never written. */
  private readonly extra = new Map<string, KeyRecord>();
  private readonly watcher: FSWatcher | undefined;
  /** Hashes of keys presented lately: every request shows its key (sha256: ~25 µs cold). */
  private readonly knownHashes = new Map<string, string>();

  constructor(dataDir: string, options: { watch?: boolean } = {}) {
    this.conf = openConfFile<{ keys: KeyRecord[] }>({
      cwd: dataDir,
      configName: 'keys',
      defaults: { keys: [] },
      configFileMode: PRIVATE_FILE,
    });
    this.reindex();
    if (options.watch) {
      // conf writes atomically (temp file + rename), so the directory is what to watch.
      this.watcher = watch(dataDir, (_event, file) => {
        if (file === 'keys.json') this.reload();
      });
      this.watcher.unref();
    }
  }

  private reload(): void {
    try {
      this.reindex();
    } catch {
      // A file being replaced can be briefly unreadable; the rename that follows reloads again.
    }
  }

  private reindex(): void {
    this.byHash = new Map(this.conf.get('keys').map((record) => [record.hash, record]));
    for (const [hash, record] of this.extra) this.byHash.set(hash, record);
  }

  /** Accepts a key given in the environment (BENCHTOP_API_KEY) for an organization, unstored. */
  trustKey(key: string, org: string): void {
    if (!KEY_PATTERN.test(key)) {
      throw new Error(
        'BENCHTOP_API_KEY must look like sk_ followed by at least 16 letters, digits, _ or -',
      );
    }
    const record: KeyRecord = {
      id: 'key_env',
      org,
      hash: hashKey(key),
      prefix: key.slice(0, 7),
      created_at: now(),
      revoked_at: null,
    };
    this.extra.set(record.hash, record);
    this.byHash.set(record.hash, record);
  }

  create(org: string): { key: string; info: KeyInfo } {
    const key = `sk_${randomBytes(24).toString('base64url')}`;
    const record: KeyRecord = {
      id: newId('key'),
      org,
      hash: hashKey(key),
      prefix: key.slice(0, 7),
      created_at: now(),
      revoked_at: null,
    };
    this.conf.set('keys', [...this.conf.get('keys'), record]);
    this.reindex();
    return { key, info: withoutHash(record) };
  }

  /** Stored keys, newest first; with `org`, only that organization's. */
  list(org?: string): KeyInfo[] {
    return this.conf
      .get('keys')
      .filter((record) => org === undefined || record.org === org)
      .reverse()
      .map(withoutHash);
  }

  /** Returns false when no stored key has that id (of that organization, when `org` is given). */
  revoke(id: string, org?: string): boolean {
    const keys = this.conf.get('keys');
    const record = keys.find((candidate) => candidate.id === id);
    if (!record || (org !== undefined && record.org !== org)) return false;
    record.revoked_at ??= now();
    this.conf.set('keys', keys);
    this.reindex();
    return true;
  }

  /** Stored keys of the organization that are not revoked. */
  liveCount(org: string): number {
    return this.conf.get('keys').filter((record) => record.org === org && !record.revoked_at)
      .length;
  }

  hasStoredKeys(): boolean {
    return this.conf.get('keys').length > 0;
  }

  verify(key: string): Principal | undefined {
    if (!KEY_PATTERN.test(key)) return undefined;
    let hash = this.knownHashes.get(key);
    if (hash === undefined) {
      hash = hashKey(key);
      // Only keys that name a record: a flood of made-up ones cannot fill the map.
      if (this.byHash.has(hash)) {
        if (this.knownHashes.size >= KNOWN_HASHES) this.knownHashes.clear();
        this.knownHashes.set(key, hash);
      }
    }
    // Looked up each time: a key revoked since is refused at once.
    const record = this.byHash.get(hash);
    if (!record || record.revoked_at) return undefined;
    return { org: record.org, keyId: record.id, keyPrefix: record.prefix };
  }

  close(): void {
    this.watcher?.close();
  }
}

function withoutHash({ hash: _hash, ...info }: KeyRecord): KeyInfo {
  return info;
}
