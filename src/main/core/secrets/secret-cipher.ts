import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';
import { PRIVATE_FILE } from '../store/private-files.js';

/**
 * How the vault seals values at rest. `keychain`: the OS keychain through Electron's
 * safeStorage (the desktop app); `key-file`: AES-256-GCM under a random key in the data dir,
 * readable by this user only (headless, where there is no keychain to ask).
 */
export type SecretCipher = {
  kind: 'keychain' | 'key-file';
  seal(value: string): Buffer;
  open(sealed: Buffer): string;
};

/** What Electron's safeStorage offers (the app hands it in; core never imports electron). */
export type SafeStorage = {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(sealed: Buffer): string;
  /** Linux only: 'basic_text' is a fixed password in Chromium's source, no keychain at all. */
  getSelectedStorageBackend?(): string;
};

export const KEY_FILE = 'vault.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The desktop app's cipher: the OS keychain when Electron has a real one, else the key file.
 * Decided at first use, not at start: safeStorage answers only once the app is ready, and the
 * server starts before that.
 */
export function appCipher(storage: SafeStorage, dataDir: string): SecretCipher {
  let chosen: SecretCipher | undefined;
  const cipher = () => (chosen ??= keychainCipher(storage) ?? keyFileCipher(dataDir));
  return {
    get kind() {
      return cipher().kind;
    },
    seal: (value) => cipher().seal(value),
    open: (sealed) => cipher().open(sealed),
  };
}

/** The OS keychain's cipher, or undefined where Electron has none (a bare Linux box). */
export function keychainCipher(storage: SafeStorage): SecretCipher | undefined {
  if (!storage.isEncryptionAvailable()) return undefined;
  if (storage.getSelectedStorageBackend?.() === 'basic_text') return undefined;
  return {
    kind: 'keychain',
    seal: (value) => storage.encryptString(value),
    open: (sealed) => storage.decryptString(sealed),
  };
}

/** AES-256-GCM under `vault.key` in the data dir, made (mode 0600) on first use. */
export function keyFileCipher(dataDir: string): SecretCipher {
  const key = readOrCreateKey(join(dataDir, KEY_FILE));
  return {
    kind: 'key-file',
    seal(value) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const body = sealed.subarray(IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    },
  };
}

function readOrCreateKey(file: string): Buffer {
  try {
    const fd = openSync(file, 'wx', PRIVATE_FILE);
    const key = randomBytes(KEY_BYTES);
    try {
      writeSync(fd, key);
    } finally {
      closeSync(fd);
    }
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readFileSync(file);
  if (key.length !== KEY_BYTES) {
    throw new ConfigError(
      `${file} is not a vault key (${key.length} bytes, not ${KEY_BYTES}): restore it from a backup, or delete it and set every secret again`,
    );
  }
  return key;
}
