import { SECRET_PLACEHOLDER, secretNames, type SecretInfo } from '../../../shared/secrets.js';
import { invalidRequest, notFound, type BenchtopError, type FieldPath } from '../errors.js';
import { now } from '../ids.js';
import type { Db } from '../store/database.js';
import type { SecretCipher } from './secret-cipher.js';

type Row = { name: string; created_at: string; sealed: Buffer; sealed_by: string };

/**
 * The vault of docs/API.md §15: secrets per organization, sealed at rest, typed where
 * `{{secret:NAME}}` stands and nowhere else. A value is never read back through the API; the
 * only copies outside the database are the keystrokes sent to a computer and this process's
 * memory (the recorder's scrubber needs the values to remove them from what it writes).
 */
export class SecretVault {
  private readonly statements;
  /** Opened values by organization, filled on first use: the scrubber reads them often. */
  private opened: Map<string, Map<string, string>> | undefined;
  private sorted: string[] | undefined;

  constructor(
    db: Db,
    private readonly cipher: SecretCipher,
  ) {
    this.statements = {
      put: db.prepare(
        `INSERT INTO secrets (org, name, created_at, sealed, sealed_by) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (org, name) DO UPDATE SET
           created_at = excluded.created_at, sealed = excluded.sealed, sealed_by = excluded.sealed_by`,
      ),
      list: db.prepare('SELECT name, created_at FROM secrets WHERE org = ? ORDER BY name'),
      remove: db.prepare('DELETE FROM secrets WHERE org = ? AND name = ?'),
      all: db.prepare('SELECT org, name, created_at, sealed, sealed_by FROM secrets'),
    };
  }

  set(org: string, name: string, value: string): SecretInfo {
    const info = { name, created_at: now() };
    this.statements.put.run(org, name, info.created_at, this.cipher.seal(value), this.cipher.kind);
    this.forget();
    return info;
  }

  list(org: string): SecretInfo[] {
    return this.statements.list.all(org) as SecretInfo[];
  }

  delete(org: string, name: string): void {
    if (this.statements.remove.run(org, name).changes === 0) {
      throw notFound(`no secret named "${name}"`, 'name');
    }
    this.forget();
  }

  /** A 400 naming the first `{{secret:NAME}}` in text the organization has no secret for. */
  unknown(org: string, text: string, path: FieldPath | string): BenchtopError | undefined {
    const known = this.values(org);
    const name = secretNames(text).find((candidate) => !known.has(candidate));
    return name === undefined ? undefined : unknownSecret(name, known, path);
  }

  /** Text with every placeholder replaced by its value: only for the keystrokes themselves. */
  resolve(org: string, text: string, path: FieldPath | string): string {
    if (!text.includes('{{secret:')) return text;
    const known = this.values(org);
    return text.replace(SECRET_PLACEHOLDER, (_match, name: string) => {
      const value = known.get(name);
      if (value === undefined) throw unknownSecret(name, known, path);
      return value;
    });
  }

  /** Every organization's values, longest first, for scrubbing what is written and answered. */
  allValues(): string[] {
    if (!this.sorted) {
      const values = [...this.load().values()].flatMap((byName) => [...byName.values()]);
      this.sorted = values.sort((a, b) => b.length - a.length);
    }
    return this.sorted;
  }

  private forget(): void {
    this.opened = undefined;
    this.sorted = undefined;
  }

  private values(org: string): Map<string, string> {
    return this.load().get(org) ?? new Map<string, string>();
  }

  private load(): Map<string, Map<string, string>> {
    if (!this.opened) {
      const opened = new Map<string, Map<string, string>>();
      for (const row of this.statements.all.all() as Array<Row & { org: string }>) {
        // A value sealed by the other cipher (the desktop app's keychain, read headless) cannot
        // be opened here: it is as good as unknown, and the 400 says how to set it again.
        if (row.sealed_by !== this.cipher.kind) continue;
        let value: string;
        try {
          value = this.cipher.open(row.sealed);
        } catch {
          continue;
        }
        if (!opened.has(row.org)) opened.set(row.org, new Map());
        opened.get(row.org)!.set(row.name, value);
      }
      this.opened = opened;
    }
    return this.opened;
  }
}

function unknownSecret(name: string, known: Map<string, string>, path: FieldPath | string) {
  const names = [...known.keys()];
  return invalidRequest(
    `unknown secret "${name}" in {{secret:${name}}}: store it first with POST /secrets {"name": "${name}", "value": …}` +
      (names.length ? ` (this organization has: ${names.join(', ')})` : ''),
    path,
  );
}
