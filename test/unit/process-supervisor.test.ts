import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  keepRecordsIn,
  launch,
  runProgram,
} from '../../src/main/core/runtime/process-supervisor.js';
import { killAll } from '../helpers/benchtop-process.js';
import { isAlive, processesLeftWith } from '../helpers/processes.js';

const temp = mkdtempSync(join(tmpdir(), 'benchtop-supervisor-'));
const left: number[] = [];
afterAll(async () => {
  await killAll(left);
  rmSync(temp, { recursive: true, force: true });
});

const supervisor = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'src', 'main', 'core', 'runtime', 'process-supervisor.ts'),
).href;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;

/** Runs `body` in a Node process of its own that has the supervisor imported as `launch`. */
function runNode(name: string, body: string): Promise<{ code: number | null; stdout: string }> {
  const script = join(temp, `${name}.mjs`);
  writeFileSync(script, `import { launch } from '${supervisor}';\n${body}\n`);
  const child = spawn(process.execPath, ['--import', tsx, script], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

describe('the process supervisor', () => {
  for (const [ending, statement] of [
    ['an uncaught exception', "throw new Error('boom');"],
    ['an unhandled rejection', "await Promise.reject(new Error('boom'));"],
    ['process.exit', 'process.exit(3);'],
    // Signals nothing in the process handles: the process still ends by them, children first.
    [
      'a SIGHUP (its terminal closed)',
      "process.kill(process.pid, 'SIGHUP'); setInterval(() => {}, 1000);",
    ],
    ['a SIGTERM', "process.kill(process.pid, 'SIGTERM'); setInterval(() => {}, 1000);"],
  ] as const) {
    it(`kills every child's whole group when Benchtop ends by ${ending}`, async () => {
      const marker = `1000.${randomInt(100_000, 1_000_000)}`;
      const ended = await runNode(
        `end-${randomInt(1_000_000)}`,
        [
          // The leader starts a second process of its group in the background, then says so.
          `const child = await launch('/bin/sh', ['-c', 'sleep ${marker} & echo ready; exec sleep ${marker}'], { stdio: ['ignore', 'pipe', 'ignore'] });`,
          "await new Promise((resolve) => child.child.stdout.once('data', resolve));",
          `console.log('started');`,
          statement,
        ].join('\n'),
      );
      expect(ended.stdout).toContain('started');
      expect(ended.code).not.toBe(0);
      const found = await processesLeftWith(`sleep ${marker}`);
      left.push(...found);
      expect(found).toEqual([]);
    });
  }

  it('records each child by pid and start time while it may run', async () => {
    const folder = mkdtempSync(join(temp, 'records-'));
    const stop = keepRecordsIn(folder);
    try {
      const child = await launch('sleep', ['30'], { stdio: 'ignore' });
      left.push(child.pid);
      expect(readdirSync(folder)).toEqual([
        expect.stringMatching(new RegExp(`^${child.pid}\\.\\d+\\.group$`)),
      ]);
      // A short tool run to its end is not recorded.
      expect((await runProgram('true', [])).code).toBe(0);
      expect(readdirSync(folder)).toHaveLength(1);
      child.kill();
      await child.exited;
      expect(isAlive(child.pid)).toBe(false);
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      stop();
    }
  });

  it('rejects with the error of a program that cannot start', async () => {
    await expect(launch('/nonexistent/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(runProgram('/nonexistent/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
