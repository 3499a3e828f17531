import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * What Linux tells about processes in /proc. Elsewhere every answer is "unknown" (undefined or
 * nothing found): only the safety nets that need it (the orphan sweep, the display sweep) use it.
 */

/** Fields of /proc/<pid>/stat from the third on (the command name before may hold spaces). */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The kernel's flag (field 9 of a stat) of a task that has begun to exit. */
const PF_EXITING = 0x4;

/**
 * When a live process started, in clock ticks since boot (field 22 of its stat); undefined when
 * there is none, only its zombie, or one that is exiting: a killed sandbox's init stays listed
 * until every process of its pid namespace has been reaped, which takes seconds where the
 * machine's init reaps orphans slowly (a microVM's), yet it never runs again. With its pid, the
 * start time names one process for good: a pid is reused only by a process that started later.
 */
export function startTimeOf(pid: number): string | undefined {
  const fields = statFields(pid);
  if (!fields || fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return Number(fields[6]) & PF_EXITING ? undefined : fields[19];
}

/** This process as records name an owner: `<pid>.<start time>`. */
export const OWN_MARK = `${process.pid}.${startTimeOf(process.pid) ?? 0}`;

/** Whether the process a mark (`<pid>.<start time>`) names still runs. */
export function markAlive(mark: string): boolean {
  const [pid, started] = mark.split('.');
  return /^\d+$/.test(pid ?? '') && startTimeOf(Number(pid)) === started;
}

/**
 * Live processes (not this one, nor zombies, whose environment reads empty) whose environment
 * holds `entry` ("NAME=value") as one of its variables.
 */
export async function processesWithEnv(entry: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '');
    if (`\0${environ}`.includes(`\0${entry}\0`)) found.push(Number(name));
  }
  return found;
}
