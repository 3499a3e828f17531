import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxSupport } from '../../src/main/core/sandbox/computer-sandbox.js';
import { killAll, serveProcess, tree, type BenchtopProcess } from '../helpers/benchtop-process.js';
import {
  commandOf,
  describeProcess,
  isAlive,
  notSpawnRelay,
  processesLeftWith,
  processesWith,
} from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

/**
 * `benchtop serve` SIGKILLed runs no close(). What it started from the spawn relay's helper (X
 * servers, commands, sandboxes) the helper ends when the server's end closes its channel; killed
 * together with the helper (the OOM killer, a kill of the whole tree), it leaves its desktops' X
 * servers and its shell commands running. Started again on the same data dir, Benchtop ends them
 * before it listens.
 */

const sandbox = await sandboxSupport();
const left: number[] = [];
const dataDirs: string[] = [];
afterAll(async () => {
  await killAll(left);
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  { where: 'on the host', sandboxed: false },
  { where: 'in their sandboxes', sandboxed: true },
])('a server and its helper SIGKILLed with two desktops and a command $where', ({ sandboxed }) => {
  it.skipIf(sandboxed && !sandbox.available)(
    'leaves its X servers running; started again on its data dir, it ends every one of them',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-orphans-'));
      dataDirs.push(dataDir);
      const env = { BENCHTOP_EXEC_SANDBOX_OWNER: String(sandboxed) };
      const servers: BenchtopProcess[] = [];
      try {
        const first = await serveProcess(dataDir, env);
        servers.push(first);
        const desktops: string[] = [];
        for (let i = 0; i < 2; i++) {
          const created = await first.request('POST', '/computers', { kind: 'desktop' });
          expect(created.status, created.text).toBe(200);
          desktops.push(created.body.id as string);
        }
        // A command line no other test runs: `sleep` takes a fraction.
        const sleep = `sleep 1000.${randomInt(100_000, 1_000_000)}`;
        void first
          .request('POST', `/computers/${desktops[0]}/exec/sync`, {
            command: sleep,
            timeout_seconds: 900,
          })
          .catch(() => undefined);
        // Running, and recorded: the server writes the record when the helper reports the
        // fork, a moment after the process appears (a kill in between leaves it unrecorded).
        await eventually(() => processesWith(sleep).some((pid) => recorded(dataDir, pid)), 15_000);
        // Each desktop's X server names its cookie file in the data dir.
        const xServers = processesWith(dataDir).filter((pid) => commandOf(pid).startsWith('Xvfb'));
        expect(xServers).toHaveLength(2);
        const before = tree(first.child.pid!).map((pid) => ({ pid, command: commandOf(pid) }));
        left.push(...before.map(({ pid }) => pid));

        // The helper stopped first, so that it cannot act on the server's end before it dies.
        const helpers = before.filter(({ pid }) => !notSpawnRelay(pid));
        expect(helpers).toHaveLength(1);
        process.kill(helpers[0]!.pid, 'SIGSTOP');
        first.child.kill('SIGKILL');
        expect(await first.exited()).toBe(null);
        process.kill(helpers[0]!.pid, 'SIGKILL');
        // Nothing closed them: without the sweep they would run on. A sandbox, and the command
        // in it, ended with its bwrap (it dies with its parent, the helper).
        await eventually(() => !isAlive(helpers[0]!.pid));
        expect(xServers.filter(isAlive)).toEqual(xServers);
        if (sandboxed) expect(await processesLeftWith(sleep)).toEqual([]);
        else expect(processesWith(sleep).length).toBeGreaterThan(0);
        const orphans = before.filter(({ pid }) => isAlive(pid));

        const second = await serveProcess(dataDir, env);
        servers.push(second);
        const survivors = orphans.filter(({ pid, command }) => {
          return isAlive(pid) && commandOf(pid) === command;
        });
        expect(survivors).toEqual([]);
        expect(processesWith(sleep)).toEqual([]);
        expect(xServers.filter(isAlive)).toEqual([]);
        expect(second.output.join('\n')).toMatch(/ended \d+ processes that a killed earlier run/);

        // The restarted server is whole: it runs desktops and commands as before.
        const again = await second.request('POST', '/computers', { kind: 'desktop' });
        expect(again.status, again.text).toBe(200);
        const ran = await second.request('POST', `/computers/${again.body.id}/exec/sync`, {
          command: 'echo ok',
        });
        expect(ran.body).toMatchObject({ exit_code: 0, stdout: 'ok\n' });
        left.push(...tree(second.child.pid!));
        second.child.kill('SIGTERM');
        expect(await second.exited()).toBe(0);
      } finally {
        for (const server of servers) server.child.kill('SIGKILL');
      }
    },
    120_000,
  );
});

describe('a server SIGKILLed alone', () => {
  it.skipIf(!sandbox.available)(
    "leaves nothing: the helper ends its desktop's X server, sandbox and command",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-orphans-'));
      dataDirs.push(dataDir);
      const server = await serveProcess(dataDir, { BENCHTOP_EXEC_SANDBOX_OWNER: 'true' });
      try {
        const created = await server.request('POST', '/computers', { kind: 'desktop' });
        expect(created.status, created.text).toBe(200);
        const sleep = `sleep 1000.${randomInt(100_000, 1_000_000)}`;
        void server
          .request('POST', `/computers/${created.body.id}/exec/sync`, { command: sleep })
          .catch(() => undefined);
        await eventually(() => processesWith(sleep).length > 0, 15_000);
        const before = tree(server.child.pid!);
        left.push(...before);
        const started = before.filter((pid) =>
          /^(Xvfb|bwrap|openbox|xterm)\b/.test(commandOf(pid)),
        );
        const names = new Set(started.map((pid) => commandOf(pid).split(' ')[0]));
        expect([...names].sort()).toEqual(['Xvfb', 'bwrap', 'openbox', 'xterm']);

        server.child.kill('SIGKILL');
        expect(await server.exited()).toBe(null);
        expect(await processesLeftWith(sleep)).toEqual([]);
        // What is still there is named if the test fails.
        await eventually(() => {
          const running = started.filter(isAlive);
          if (running.length === 0) return true;
          throw new Error(`still running: ${running.map(describeProcess).join('; ')}`);
        }, 5000);
      } finally {
        server.child.kill('SIGKILL');
      }
    },
    60_000,
  );
});

/** Whether a run on the data dir recorded the process for the orphan sweep. */
function recorded(dataDir: string, pid: number): boolean {
  const runs = join(dataDir, 'runs');
  return readdirSync(runs).some((run) =>
    readdirSync(join(runs, run)).some((record) => record.startsWith(`${pid}.`)),
  );
}
