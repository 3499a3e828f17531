import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../config.js';
import { groupAlive, keepRecordsIn, killGroup } from './process-supervisor.js';
import { markAlive, OWN_MARK, startTimeOf } from './process-table.js';

/** The data dir's folder of runs: a folder per Benchtop process on it, named by its mark. */
const RUNS = 'runs';
/** How long the sweep waits for what it SIGKILLed to be gone. */
const GONE_TIMEOUT_MS = 2000;
const POLL_MS = 20;

export type Run = {
  /** Processes that earlier runs on the data dir left behind, ended on this start. */
  orphansEnded: number;
  /** Forgets this run: called once it closed, having ended its children itself. */
  end(): void;
};

/**
 * Starts a run of Benchtop on a data dir: the process supervisor records its children in the
 * run's folder. A run that ended without closing (SIGKILLed, out of memory) left its folder and
 * its children behind: Xvfb and the window managers and terminals of its desktops, its shell
 * commands, its sandboxes. Those are ended first: every recorded process that still runs (the
 * start time tells a reused pid apart) with its process group, and the groups that outlived
 * their leader (a command's background process). What ran inside a sandbox ends with it. A run
 * whose process still lives makes this start fail: one Benchtop per data dir. Linux only:
 * elsewhere start times are unknown, and a record matches nothing.
 */
export async function beginRun(dataDir: string): Promise<Run> {
  const runs = join(dataDir, RUNS);
  const own = join(runs, OWN_MARK);
  // This run's folder first, then a look for others: of two starts at the same moment, at least
  // one sees the other (both may refuse; neither runs beside the other).
  mkdirSync(own, { recursive: true, mode: 0o700 });
  const owners = readdirSync(runs);
  // Two processes on one data dir would take each other's folders (a spare desktop's, say).
  const running = owners.find((owner) => owner !== OWN_MARK && markAlive(owner));
  if (running) {
    rmSync(own, { recursive: true, force: true });
    throw new ConfigError(
      `another Benchtop (process ${running.split('.')[0]}) runs on the data dir ${dataDir}: use that one, stop it first, or give this one another data dir with BENCHTOP_DATA_DIR`,
    );
  }
  const killed: string[] = [];
  for (const owner of owners) {
    if (owner === OWN_MARK || markAlive(owner)) continue;
    const folder = join(runs, owner);
    for (const record of readdirSync(folder)) killed.push(...endRecorded(record));
    rmSync(folder, { recursive: true, force: true });
  }
  await untilGone(killed);
  const stop = keepRecordsIn(own);
  return {
    orphansEnded: killed.length,
    end() {
      stop();
      try {
        rmSync(own, { recursive: true, force: true });
      } catch {
        // A data dir turned read-only: the next start finds this run gone and its records stale.
      }
    },
  };
}

/** Ends what a record (`<pid>.<start time>.<group|process>`) names; the marks of what it killed. */
function endRecorded(record: string): string[] {
  const [pid, started, kind] = record.split('.');
  const mark = `${pid}.${started}`;
  if (!/^\d+$/.test(pid ?? '')) return [];
  const leader = Number(pid);
  if (markAlive(mark)) {
    if (kind === 'group') killGroup(leader);
    else killProcess(leader);
    return [mark];
  }
  // The leader is gone, and no process took its pid: a group by that id is still its own (the
  // id of a group with members left is never given to a new process).
  if (kind === 'group' && startTimeOf(leader) === undefined && groupAlive(leader)) {
    killGroup(leader);
  }
  return [];
}

function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

/** SIGKILL is delivered, not awaited: waits until none of them runs any more. */
async function untilGone(marks: string[]): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  while (marks.some(markAlive) && Date.now() < deadline) await sleep(POLL_MS);
}
