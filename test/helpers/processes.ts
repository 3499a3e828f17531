import { readdirSync, readFileSync } from 'node:fs';
import { startTimeOf, statFields } from '../../src/main/core/runtime/process-table.js';
import { HELPER_TITLE } from '../../src/main/core/runtime/spawn-relay.js';

/** A process's parent, read from /proc (Linux); throws when it is gone. */
export function parentOf(pid: number): number {
  const fields = statFields(pid);
  if (!fields) throw new Error(`process ${pid} is gone`);
  return Number(fields[1]);
}

/** Pids of every live descendant of a process, read from /proc (Linux). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = parentOf(Number(entry));
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Not the spawn relay's helper: it serves the whole test process (every server in it), starts
 * with its first program and ends with the process, so a server's close leaves it running.
 */
export function notSpawnRelay(pid: number): boolean {
  return !commandOf(pid).startsWith(HELPER_TITLE);
}

/** Still able to run: not gone, not a zombie, not exiting. */
export function isAlive(pid: number): boolean {
  return startTimeOf(pid) !== undefined;
}

/** A process as a failing test names it: pid, state, parent, process group and command line. */
export function describeProcess(pid: number): string {
  const fields = statFields(pid);
  if (!fields) return `${pid} (gone)`;
  const [state, ppid, pgid] = fields;
  return `${pid} (${state}, parent ${ppid}, group ${pgid}) ${commandOf(pid)}`;
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * Host pids of live processes whose command line contains `marker` (a computer's commands run in
 * their own pid namespace, so the pids they print of themselves mean nothing on the host).
 */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    if (commandOf(Number(entry)).includes(marker) && isAlive(Number(entry)))
      found.push(Number(entry));
  }
  return found;
}

/**
 * processesWith(marker) once it is empty, or what is still there after `ms`: a SIGKILLed process
 * can linger for a moment on a loaded machine before the kernel removes it.
 */
export async function processesLeftWith(marker: string, ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let found = processesWith(marker);
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = processesWith(marker);
  }
  return found;
}
