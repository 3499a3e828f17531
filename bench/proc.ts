/**
 * What the bench reads from /proc: PSS summed over the Chromium processes below this one, CPU
 * ticks of this process tree, and the machine's noise (CPU used by processes outside the bench).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestServer } from '../test/helpers/test-server.js';
import { round } from './stats.js';

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid …"; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Playwright spawns Chromium from this process; Chromium spawns its zygotes, GPU, renderers. */
export function chromiumProcesses(): number[] {
  return descendants(process.pid).filter((pid) => {
    try {
      return /chrom/i.test(readFileSync(`/proc/${pid}/comm`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/** Encoders the recorder started below this process (segments compacted in the background). */
export function encoderProcesses(): number[] {
  return descendants(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg';
    } catch {
      return false;
    }
  });
}

export type Pss = { mb: number; processes: number };

function chromiumPss(): Pss {
  let kb = 0;
  let processes = 0;
  for (const pid of chromiumProcesses()) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const match = /^Pss:\s+(\d+) kB/m.exec(rollup);
      if (!match) continue;
      kb += Number(match[1]);
      processes += 1;
    } catch {
      // a process that ended between listing and reading holds nothing
    }
  }
  return { mb: kb / 1024, processes };
}

/** PSS of one process in kB (0 once it ended). */
function pssKb(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // ended between listing and reading
  }
}

/**
 * PSS of this process (the server and the bench's clients) and of everything below it: Chromium,
 * and whatever else the server started (encoders, workers).
 */
export type TreePss = Pss & { serverMb: number };

export function treePss(): TreePss {
  const below = descendants(process.pid);
  const server = pssKb(process.pid);
  const kb = below.reduce((sum, pid) => sum + pssKb(pid), server);
  return { mb: kb / 1024, serverMb: server / 1024, processes: below.length + 1 };
}

/** Clock ticks a second (USER_HZ, 100 on Linux): the unit of /proc's CPU times. */
export const TICKS_PER_SECOND = 100;

/** Clock ticks (USER_HZ) the whole machine spent busy, and stolen by the hypervisor. */
function machineTicks(): { busy: number; steal: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return { busy: user! + nice! + system! + irq! + softirq!, steal: steal ?? 0 };
}

/** Clock ticks a process used: utime and stime, with its reaped children's if asked (0 once gone). */
function ticksOf(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime: fields 14–17 of stat, 11–14 after the command name.
    const indexes = reaped ? [11, 12, 13, 14] : [11, 12];
    return indexes.reduce((sum, index) => sum + Number(fields[index]), 0);
  } catch {
    return 0; // ended meanwhile
  }
}

/** Clock ticks this process and everything below it used (reaped children included). */
export function ownTicks(): number {
  let ticks = 0;
  for (const pid of [process.pid, ...descendants(process.pid)]) ticks += ticksOf(pid, true);
  return ticks;
}

type Noise = { others_cpu_pct: number; steal_pct: number };

export function noiseMeter(): () => Noise {
  const machine = machineTicks();
  const own = ownTicks();
  const started = performance.now();
  return () => {
    const capacity = ((performance.now() - started) / 1000) * TICKS_PER_SECOND * cpus().length;
    const now = machineTicks();
    const others = now.busy - machine.busy - (ownTicks() - own);
    return {
      others_cpu_pct: round(Math.max(0, (others / capacity) * 100), 1),
      steal_pct: round(((now.steal - machine.steal) / capacity) * 100, 1),
    };
  };
}

/** After the pool is full and the process count has stopped moving: the median of 5 readings. */
export async function settledPss(server: TestServer): Promise<Pss> {
  await server.core.browsers.whenWarm();
  return settled(chromiumPss, 2);
}

/** Like settledPss, over the whole tree: this process (the server) and everything below it. */
export async function settledTreePss(server: TestServer): Promise<TreePss> {
  await server.core.browsers.whenWarm();
  return settled(treePss, 5);
}

/** Once the process count has stopped moving and PSS within `mb`: the median of 5 readings. */
async function settled<T extends Pss>(read: () => T, mb: number): Promise<T> {
  await sleep(1000);
  let last = read();
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = read();
    const stable = now.processes === last.processes && Math.abs(now.mb - last.mb) < mb;
    last = now;
    if (stable) break;
  }
  const readings: T[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(read());
    await sleep(150);
  }
  readings.sort((a, b) => a.mb - b.mb);
  return readings[2]!;
}

/** A desktop's processes: its X server, its worker, and every process on its display. */
function desktopProcesses(server: TestServer, id: string): number[] {
  const computer = server.core.computers.get('local', id);
  const { display, worker } = (
    computer.operator as unknown as {
      options: { display: { pid: number }; worker: { pid: number } };
    }
  ).options;
  const pids = new Set([display.pid, worker.pid]);
  const variable = `\0DISPLAY=${computer.spec.env.DISPLAY}\0`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(variable))
        pids.add(Number(entry));
    } catch {
      // ended meanwhile, or not ours to read
    }
  }
  return [...pids];
}

/**
 * PSS of a desktop's processes once it is idle, the median of 9 readings over 4 s; `parts` says
 * what each program held (MB), largest first; `cpuPct` the CPU they used meanwhile, in % of one
 * core. Idle means past its start: a recorded desktop's worker read 89 MB two to three seconds
 * after its create and 64–71 MB from the fourth second on (sampled each second for 15 s).
 */
export async function desktopPss(
  server: TestServer,
  id: string,
): Promise<{ mb: number; parts: string; cpuPct: number }> {
  await sleep(6000);
  const ticks = () => desktopProcesses(server, id).reduce((sum, pid) => sum + ticksOf(pid), 0);
  const [ticksBefore, since] = [ticks(), performance.now()];
  const readings: Array<{ mb: number; parts: string }> = [];
  for (let i = 0; i < 9; i++) {
    const byProgram = new Map<string, number>();
    for (const pid of desktopProcesses(server, id)) {
      let name: string;
      try {
        name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue; // ended meanwhile
      }
      if (name === 'node' || name === 'MainThread') name = 'worker';
      byProgram.set(name, (byProgram.get(name) ?? 0) + pssKb(pid) / 1024);
    }
    const mb = [...byProgram.values()].reduce((a, b) => a + b, 0);
    const parts = [...byProgram]
      .sort((a, b) => b[1] - a[1])
      .map(([name, value]) => `${name} ${value.toFixed(1)}`)
      .join(', ');
    readings.push({ mb, parts });
    await sleep(500);
  }
  const seconds = (performance.now() - since) / 1000;
  const cpuPct = ((ticks() - ticksBefore) / TICKS_PER_SECOND / seconds) * 100;
  readings.sort((a, b) => a.mb - b.mb);
  return { ...readings[4]!, cpuPct };
}
