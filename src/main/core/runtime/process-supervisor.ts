import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onExit } from 'signal-exit';
import { startTimeOf } from './process-table.js';
import { relayedStdio, spawnRelay, type RelayedChild } from './spawn-relay.js';

/**
 * Every child process of Benchtop starts here: X servers, window managers, terminals, desktop
 * workers, shell commands, sandboxes, the programs a desktop runs, the launcher's Electron.
 *
 * - A child is by default the leader of a process group of its own, and is ended as a whole
 *   group: whatever it started goes with it.
 * - Every child still running when Benchtop's process exits, for whatever reason (an uncaught
 *   exception or unhandled rejection ends it through 'exit' too, and so does a signal nothing
 *   else in the process handles: a closed terminal's SIGHUP), is SIGKILLed on the way out.
 * - While a run's record folder is kept (see orphan-sweep.ts), each child is recorded there by
 *   pid and start time until it is gone, so that a later start can end what a run that was itself
 *   SIGKILLed left behind. Nothing is added to a child's environment: commands see exactly theirs.
 * - Programs with only pipes or nothing as their descriptors are forked by the spawn relay's
 *   helper, not by this process (spawn-relay.ts): the same pids, groups, records and kills, and a
 *   SIGKILLed Benchtop's helper kills them itself.
 */

/**
 * The signals on which a host of Benchtop (the command line, the MCP bridge, the app and its
 * launcher) closes every computer in order and exits. SIGHUP: the terminal it runs in was closed.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export type LaunchOptions = {
  /** The child's whole environment (default: Benchtop's own). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  stdio?: StdioOptions;
  /**
   * Leader of a process group of its own (default): ended as a whole, and out of reach of the
   * terminal's Ctrl+C. False: in Benchtop's group, ended alone.
   */
  group?: boolean;
  /** Recorded for the orphan sweep (default true); false for a short tool run to its end. */
  recorded?: boolean;
};

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** A started program as its owner sees it: started here, or by the spawn relay. */
export type Child = ChildProcess | RelayedChild;

export type Launched = {
  readonly pid: number;
  /** For its pipes; end it with kill(), which reaches its whole group. */
  readonly child: Child;
  /** Settles when the child itself has exited (members of its group may still run). */
  readonly exited: Promise<Exit>;
  /** Started and not exited yet. */
  readonly running: boolean;
  /** Signals its group (or only it, when it has none of its own); SIGKILL unless told. */
  kill(signal?: NodeJS.Signals): void;
};

/**
 * What Benchtop started and may still run, by pid: a group is kept after its leader exited while
 * members are left (a command's background process).
 */
const live = new Map<number, { group: boolean; leaderExited: boolean; record?: string }>();
let safetyNet = false;
/** Folders every child is recorded in while it may run (one per data dir this process runs on). */
const recordFolders = new Set<string>();

/**
 * Resolves once the child runs; rejects with spawn's error (ENOENT…) when it cannot start.
 * A program whose descriptors (the standard three and a fourth, if any) are pipes or nothing is
 * started by the spawn relay, which spares the server's event loop the fork (see spawn-relay.ts);
 * one given others (a terminal) is started here.
 */
export async function launch(
  file: string,
  args: string[],
  options: LaunchOptions = {},
): Promise<Launched> {
  installSafetyNet();
  pruneEmptyGroups();
  const group = options.group ?? true;
  const spawnOptions = { cwd: options.cwd, env: options.env ?? process.env, detached: group };
  const relayed = relayedStdio(options.stdio);
  const relay = relayed && (await spawnRelay(watchHelper));
  return new Promise((resolve, reject) => {
    let child: Child;
    try {
      if (relay && relayed) {
        child = relay.spawn(file, args, { ...spawnOptions, stdio: relayed });
      } else {
        child = spawn(file, args, { ...spawnOptions, stdio: options.stdio });
      }
    } catch (error) {
      // Invalid arguments (a NUL byte in an argument or the environment) throw at once.
      return reject(error as Error);
    }
    let started = false;
    // Kept after the start too: an 'error' event without a listener would throw.
    child.on('error', (error: Error) => {
      if (!started) reject(error);
    });
    child.once('spawn', () => {
      started = true;
      const pid = child.pid!;
      const record =
        options.recorded === false ? undefined : writeRecord(pid, group ? 'group' : 'process');
      live.set(pid, { group, leaderExited: false, record });
      const exited = new Promise<Exit>((resolveExit) => {
        child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
          const entry = live.get(pid);
          if (entry && (!group || !groupAlive(pid))) forget(pid);
          else if (entry) entry.leaderExited = true;
          resolveExit({ code, signal });
        });
      });
      resolve({
        pid,
        child,
        exited,
        get running() {
          return child.exitCode === null && child.signalCode === null;
        },
        kill(signal = 'SIGKILL') {
          if (group) killGroup(pid, signal);
          else if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        },
      });
    });
  });
}

/** The spawn relay's helper is a child like any other: killed, with its group, on the way out. */
function watchHelper(helper: ChildProcess): void {
  const pid = helper.pid!;
  live.set(pid, { group: true, leaderExited: false });
  helper.once('exit', () => forget(pid));
}

export type Finished = Exit & { stdout: string; stderr: string; timedOut: boolean };

/**
 * Runs a short program to its end (a tool Benchtop asks something: xdotool, bwrap --version) and
 * collects its output; killed after `timeoutMs`. Rejects only when it cannot start.
 */
export async function runProgram(
  file: string,
  args: string[],
  options: Pick<LaunchOptions, 'env' | 'cwd'> & {
    timeoutMs?: number;
    /** Written to the program's stdin, which then closes (text that must not be in its argv). */
    input?: string;
  } = {},
): Promise<Finished> {
  const { input, ...launchOptions } = options;
  const program = await launch(file, args, {
    ...launchOptions,
    group: false,
    recorded: false,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  const { child } = program;
  if (input !== undefined) {
    // A program that exits without reading all of it closes the pipe: not an error of ours.
    child.stdin!.on('error', () => {});
    child.stdin!.end(input);
  }
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          program.kill();
        }, options.timeoutMs);
  // 'close': the output is complete once the pipes have closed too.
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) =>
      resolve([code, signal]),
    ),
  );
  clearTimeout(timer);
  return { code, signal, stdout, stderr, timedOut };
}

/** Signals every process of a group (its leader's pid); nothing when it is gone already. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Whether any process of the group is left. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Forgets groups whose leader exited and whose last member is gone (their id can be reused). */
function pruneEmptyGroups(): void {
  for (const [pid, entry] of live) {
    if (entry.leaderExited && !groupAlive(pid)) forget(pid);
  }
}

/**
 * Records every child in `folder` from now on, as `<pid>.<start time>.<group|process>` (an empty
 * file, removed once it is gone); returns the stop. A record that cannot be written (a disk that
 * turned read-only) is skipped: the child runs all the same.
 */
export function keepRecordsIn(folder: string): () => void {
  recordFolders.add(folder);
  return () => recordFolders.delete(folder);
}

function writeRecord(pid: number, kind: 'group' | 'process'): string | undefined {
  if (recordFolders.size === 0) return undefined;
  // The mark (pid and start time) names this child for good; a reused pid has another.
  const name = `${pid}.${startTimeOf(pid) ?? 0}.${kind}`;
  for (const folder of recordFolders) {
    try {
      writeFileSync(join(folder, name), '');
    } catch {
      // Not recorded there: only the orphan sweep after a SIGKILL would have used it.
    }
  }
  return name;
}

function forget(pid: number): void {
  const record = live.get(pid)?.record;
  live.delete(pid);
  if (record === undefined) return;
  for (const folder of recordFolders) {
    try {
      rmSync(join(folder, record), { force: true });
    } catch {
      // Left for the next start's sweep, which finds it gone.
    }
  }
}

function installSafetyNet(): void {
  if (safetyNet) return;
  safetyNet = true;
  // Synchronous, as exit handlers must be: nothing Benchtop started outlives it. signal-exit
  // also calls it for a signal that would end the process because nothing else listens for it
  // (then lets the signal end the process); a host that handles the signal (the command line,
  // the app) closes in order and exits, which calls it too.
  onExit(() => {
    for (const [pid, entry] of live) {
      if (entry.group) killGroup(pid);
      else killProcess(pid);
    }
  });
}

function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
