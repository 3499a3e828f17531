import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CD_THEN_EXEC } from '../../src/main/core/sandbox/computer-sandbox.js';

// Where nsenter cannot set the directory itself (util-linux before 2.38), a command enters its
// sandbox through this script; the same shell runs it here, on the host.
const dir = mkdtempSync(join(tmpdir(), 'benchtop-enter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const enter = (where: string, ...program: string[]) =>
  spawnSync('/bin/sh', ['-c', CD_THEN_EXEC, 'sh', where, ...program], { encoding: 'utf8' });

describe('a command started in a directory without nsenter --wdns', () => {
  it('runs the program there with its arguments as given', () => {
    const sub = join(dir, 'a dir');
    mkdirSync(sub);
    const ran = enter(sub, '/bin/sh', '-c', 'pwd; printf "%s|" "$@"', 'zero', 'one two', '$3', '');
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe(`${sub}\none two|$3||`);
  });

  it('runs nothing when the directory is not there', () => {
    const marker = join(dir, 'ran');
    const ran = enter(join(dir, 'missing'), '/bin/sh', '-c', `touch ${marker}`);
    expect(ran.status).not.toBe(0);
    expect(spawnSync('test', ['-e', marker]).status).toBe(1);
  });
});
