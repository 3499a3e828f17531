import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../../errors.js';

const START_TIMEOUT_MS = 10_000;
const INSTALL_HINT = 'install them (Debian/Ubuntu: apt-get install xvfb openbox xterm xdotool)';

export type XDisplay = {
  /** ":N" */
  name: string;
  width: number;
  height: number;
  /** The X server's process id. */
  pid: number;
  /** Runs a program on this display in its own process group; ended with the display. */
  launch(
    command: string,
    args: string[],
    options?: { cwd?: string; env?: Record<string, string> },
  ): ChildProcess;
  /** Called once if the X server dies on its own. */
  onExit(listener: () => void): void;
  close(): Promise<void>;
};

/**
 * A private X display: Xvfb picks a free display number itself (-displayfd, so two computers never
 * race for one), then a window manager. Nothing here ever touches the user's real screen.
 */
export async function startXDisplay(width: number, height: number): Promise<XDisplay> {
  const xvfb = spawn(
    'Xvfb',
    ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-noreset'],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const number = await readDisplayNumber(xvfb);
  const name = `:${number}`;
  const children: ChildProcess[] = [xvfb];
  let closing = false;
  const exitListeners: Array<() => void> = [];
  xvfb.once('exit', () => {
    if (!closing) for (const listener of exitListeners) listener();
  });
  const display: XDisplay = {
    name,
    width,
    height,
    pid: xvfb.pid!,
    launch(command, args, options = {}) {
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: { ...process.env, ...options.env, DISPLAY: name },
        detached: true,
        stdio: 'ignore',
      });
      child.on('error', () => {});
      children.push(child);
      return child;
    },
    onExit: (listener) => exitListeners.push(listener),
    async close() {
      closing = true;
      for (const child of children.reverse()) killGroup(child);
      await sweepDisplay(name);
    },
  };
  display.launch('openbox', ['--sm-disable']);
  return display;
}

function readDisplayNumber(xvfb: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    let out = '';
    const timer = setTimeout(
      () => fail(`Xvfb did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr.trim()}`),
      START_TIMEOUT_MS,
    );
    const fail = (message: string) => {
      clearTimeout(timer);
      killGroup(xvfb);
      reject(unavailable(message));
    };
    xvfb.once('error', (error: NodeJS.ErrnoException) => {
      fail(
        error.code === 'ENOENT'
          ? `desktop computers need Xvfb, openbox and xterm: ${INSTALL_HINT}`
          : `Xvfb could not start: ${error.message}`,
      );
    });
    xvfb.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    xvfb.stdio[3]!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      resolve(Number(out.trim()));
    });
    xvfb.once('exit', (code) => fail(`Xvfb exited with code ${code}: ${stderr.trim()}`));
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Ends whatever still runs on the display (a program a command started in the background, a
 * browser opened by navigate): any process whose environment says DISPLAY=:N. Linux only.
 */
async function sweepDisplay(name: string): Promise<void> {
  if (process.platform !== 'linux') return;
  const marker = `DISPLAY=${name}\0`;
  for (let round = 0; round < 3; round++) {
    const pids = await processesWith(marker);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await sleep(20);
  }
}

async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (`\0${environ}`.includes(`\0${marker}`)) found.push(Number(entry));
  }
  return found;
}
