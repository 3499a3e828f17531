import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appCipher,
  KEY_FILE,
  keyFileCipher,
  type SafeStorage,
} from '../../src/main/core/secrets/secret-cipher.js';
import { SecretVault } from '../../src/main/core/secrets/secret-vault.js';
import { mayHoldValues, redactValues } from '../../src/main/core/secrets/redact.js';
import { openDatabase } from '../../src/main/core/store/database.js';
import { BenchtopError } from '../../src/main/core/errors.js';

const scratch = () => mkdtempSync(join(tmpdir(), 'benchtop-vault-'));

/** safeStorage as Electron gives it, sealing by reversing the bytes (enough to tell it was used). */
function fakeSafeStorage(available: boolean, backend = 'gnome_libsecret'): SafeStorage {
  return {
    isEncryptionAvailable: () => available,
    getSelectedStorageBackend: () => backend,
    encryptString: (plain) => Buffer.from(plain).reverse(),
    decryptString: (sealed) => Buffer.from(sealed).reverse().toString(),
  };
}

describe('keyFileCipher', () => {
  it('seals with a key of its own, readable by this user only, and opens what it sealed', () => {
    const dir = scratch();
    const cipher = keyFileCipher(dir);
    const sealed = cipher.seal('hunter2-value');
    expect(sealed.includes('hunter2-value')).toBe(false);
    expect(cipher.seal('hunter2-value').equals(sealed)).toBe(false);
    expect(keyFileCipher(dir).open(sealed)).toBe('hunter2-value');
    expect(statSync(join(dir, KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(() => keyFileCipher(scratch()).open(sealed)).toThrow();
  });

  it('refuses a key file that is not one, saying what to do', () => {
    const dir = scratch();
    writeFileSync(join(dir, KEY_FILE), 'short');
    expect(() => keyFileCipher(dir)).toThrow(/restore it from a backup, or delete it/);
  });
});

describe('appCipher', () => {
  it('uses the OS keychain when Electron has one, else the key file', () => {
    expect(appCipher(fakeSafeStorage(true), scratch()).kind).toBe('keychain');
    expect(appCipher(fakeSafeStorage(false), scratch()).kind).toBe('key-file');
    // Chromium's basic_text backend is a password in its source: no better than a key file.
    expect(appCipher(fakeSafeStorage(true, 'basic_text'), scratch()).kind).toBe('key-file');
  });
});

describe('SecretVault', () => {
  const vault = (dir = scratch(), cipher = keyFileCipher(dir)) =>
    new SecretVault(openDatabase(join(dir, 'benchtop.sqlite')), cipher);

  it('resolves placeholders per organization and names an unknown one', () => {
    const secrets = vault();
    secrets.set('acme', 'PW', 'acme-password');
    secrets.set('other', 'PW', 'other-password');
    expect(secrets.resolve('acme', 'user {{secret:PW}}!', 'text')).toBe('user acme-password!');
    expect(secrets.resolve('other', '{{secret:PW}}', 'text')).toBe('other-password');
    expect(secrets.resolve('acme', 'no placeholder', 'text')).toBe('no placeholder');
    expect(secrets.unknown('acme', '{{secret:PW}} {{secret:OTP}}', 'text')?.message).toMatch(
      /unknown secret "OTP".*this organization has: PW/,
    );
    expect(secrets.unknown('acme', '{{secret:PW}}', 'text')).toBeUndefined();
    expect(() => secrets.resolve('nobody', '{{secret:PW}}', 'text')).toThrow(BenchtopError);
    expect(secrets.list('acme')).toEqual([{ name: 'PW', created_at: expect.any(String) }]);
  });

  it('replaces a value, forgets a deleted one, and keeps the database free of the value', () => {
    const dir = scratch();
    const secrets = vault(dir);
    secrets.set('acme', 'PW', 'first-value');
    secrets.set('acme', 'PW', 'second-value');
    expect(secrets.resolve('acme', '{{secret:PW}}', 'text')).toBe('second-value');
    expect(secrets.allValues()).toEqual(['second-value']);
    secrets.delete('acme', 'PW');
    expect(secrets.allValues()).toEqual([]);
    expect(() => secrets.delete('acme', 'PW')).toThrow(/no secret named "PW"/);
    secrets.set('acme', 'KEPT', 'kept-value-42');
    for (const file of ['benchtop.sqlite', 'benchtop.sqlite-wal']) {
      expect(readFileSync(join(dir, file)).includes('kept-value-42'), file).toBe(false);
    }
  });

  it('treats a value another cipher sealed as unknown (the app’s keychain, read headless)', () => {
    const dir = scratch();
    vault(dir, appCipher(fakeSafeStorage(true), dir)).set('acme', 'PW', 'from-the-app');
    const headless = vault(dir);
    expect(headless.list('acme').map((info) => info.name)).toEqual(['PW']);
    expect(() => headless.resolve('acme', '{{secret:PW}}', 'text')).toThrow(/unknown secret/);
  });
});

describe('redactValues', () => {
  it('takes out every form of each value, the longest first', () => {
    const text = 'a=abcdef b=abcd c=' + encodeURIComponent('p@ss word') + ' d="q\\"uote"';
    expect(redactValues(text, ['abcdef', 'abcd', 'p@ss word', 'q"uote'])).toBe(
      'a=[redacted] b=[redacted] c=[redacted] d="[redacted]"',
    );
    expect(redactValues('abc', ['abc'])).toBe('abc');
  });
});

describe('mayHoldValues', () => {
  const answer = (html: string) => ({
    request_id: 'r1',
    status: 'success',
    result: { html_content: html, title: 'Log in', url: 'http://127.0.0.1/x?q=1', width: 1280 },
    executed_tab_id: 'tab_1',
    timestamp: '2026-11-26T06:00:00.000Z',
  });
  const redacts = (value: unknown, values: string[]) =>
    redactValues(JSON.stringify(value), values) !== JSON.stringify(value);

  it('is false only for answers whose JSON redactValues leaves as it is', () => {
    const values = ['hunter22', 'p@ss word', 'tok-123'];
    const cases = [
      answer('<p>nothing here</p>'),
      answer('<input value="hunter22">'),
      answer(`<a href="/?p=${encodeURIComponent('p@ss word')}">`),
      { ...answer('x'), result: { tabs: [{ title: 'tok-123' }] } },
      { ...answer('x'), result: { 'tok-1234': true } },
      { ...answer('x'), result: { n: 1280 } },
    ];
    for (const value of cases) {
      if (!mayHoldValues(value, values)) expect(redacts(value, values)).toBe(false);
    }
    expect(mayHoldValues(cases[0], values)).toBe(false);
    for (const value of cases.slice(1, 5)) expect(mayHoldValues(value, values)).toBe(true);
    // A number or literal that is a value: its JSON would be, so it is searched too.
    expect(mayHoldValues({ n: 1280 }, ['1280'])).toBe(true);
  });

  it('leaves values shorter than the vault allows out, as redactValues does', () => {
    expect(mayHoldValues(answer('abc'), ['abc'])).toBe(false);
  });

  it('is always true for a value holding what JSON escapes or writes between values', () => {
    for (const value of ['q"uote', 'back\\slash', 'a,b:c', 'line\nbreak']) {
      expect(mayHoldValues(answer('<p>nothing here</p>'), [value])).toBe(true);
    }
  });
});
