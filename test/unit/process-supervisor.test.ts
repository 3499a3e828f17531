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
import { eventually } from '../helpers/test-server.js';
import {
  descendants,
  notSpawnRelay,
  isAlive,
  processesLeftWith,
  processesWith,
} from '../helpers/processes.js';

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

/** Starts `body` in a Node process of its own that has the supervisor imported as `launch`. */
function startNode(name: string, body: string) {
  const script = join(temp, `${name}.mjs`);
  writeFileSync(script, `import { launch } from '${supervisor}';\n${body}\n`);
  return spawn(process.execPath, ['--import', tsx, script], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Runs `body` as startNode does, to its end. */
function runNode(name: string, body: string): Promise<{ code: number | null; stdout: string }> {
  const child = startNode(name, body);
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

  // No exit handler runs on a SIGKILL: the spawn relay's helper sees its channel close and kills
  // what it started (before it, the orphan sweep of the next start was the only remedy).
  it('kills every child a SIGKILLed Benchtop started with pipes or nothing', async () => {
    const marker = `1000.${randomInt(100_000, 1_000_000)}`;
    const node = startNode(
      `sigkill-${randomInt(1_000_000)}`,
      [
        `await launch('sleep', ['${marker}'], { stdio: 'ignore' });`,
        `await launch('/bin/sh', ['-c', 'sleep ${marker} & exec sleep ${marker}'], { stdio: ['ignore', 'pipe', 'pipe'], group: false });`,
        "console.log('started');",
        'setInterval(() => {}, 1000);',
      ].join('\n'),
    );
    // Ended after the file even when a check fails first (its helper then ends the rest).
    left.push(node.pid!);
    await new Promise((resolve) => node.stdout.once('data', resolve));
    // The first, and the shell's two once it has started one and become the other.
    await eventually(() => processesWith(`sleep ${marker}`).length === 3);
    const helpers = descendants(node.pid!).filter((pid) => !notSpawnRelay(pid));
    expect(helpers).toHaveLength(1);
    node.kill('SIGKILL');
    const found = await processesLeftWith(`sleep ${marker}`);
    left.push(...found);
    expect(found).toEqual([]);
    await eventually(() => !isAlive(helpers[0]!));
  });

  it('starts programs itself where its runtime cannot run the spawn relay', async () => {
    // A runtime whose binary does not run scripts (an Electron built without run-as-node).
    const ran = await runNode(
      `no-relay-${randomInt(1_000_000)}`,
      [
        "process.execPath = '/bin/false';",
        `const { runProgram } = await import('${supervisor}');`,
        "const first = await runProgram('/bin/sh', ['-c', 'echo $PPID']);",
        "const second = await runProgram('/bin/sh', ['-c', 'echo $PPID']);",
        'console.log(JSON.stringify([first.stdout.trim(), second.stdout.trim(), String(process.pid)]));',
      ].join('\n'),
    );
    const [first, second, pid] = JSON.parse(ran.stdout) as string[];
    expect([first, second]).toEqual([pid, pid]);
  });

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
