import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyPlainFile } from '../../src/main/core/computers/desktop/desktop-browser.js';

/** A sandbox's program may plant anything where its browser's downloads are written. */
describe('copying a download out of a sandbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-copy-plain-'));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies a plain file', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'guid'), 'date,amount\n');
    await copyPlainFile(join(dir, 'guid'), join(dir, 'invoice.csv'));
    expect(readFileSync(join(dir, 'invoice.csv'), 'utf8')).toBe('date,amount\n');
  });

  it("refuses a link to one of the machine's files, and a folder, copying nothing", async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'keys.json'), '{"secret":true}');
    symlinkSync(join(dir, 'keys.json'), join(dir, 'planted'));
    await expect(copyPlainFile(join(dir, 'planted'), join(dir, 'out'))).rejects.toThrow(/ELOOP/);
    mkdirSync(join(dir, 'folder'));
    await expect(copyPlainFile(join(dir, 'folder'), join(dir, 'out'))).rejects.toThrow(
      /is not a file/,
    );
    expect(() => readFileSync(join(dir, 'out'))).toThrow(/ENOENT/);
  });
});
