import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../../errors.js';
import { launch, type Launched } from '../../runtime/process-supervisor.js';
import { processesWithEnv } from '../../runtime/process-table.js';
import { sandboxEnv, type ComputerSandbox } from '../../sandbox/computer-sandbox.js';

const START_TIMEOUT_MS = 10_000;
const INSTALL_HINT = 'install them (Debian/Ubuntu: apt-get install xvfb openbox xterm xdotool)';

export type XDisplay = {
  /** ":N" */
  name: string;
  /** DISPLAY and XAUTHORITY for a program on the host: without the cookie, X refuses it. */
  env: Record<string, string>;
  /** The server's socket on the host (also listened on as an abstract socket). */
  socket: string;
  width: number;
  height: number;
  /** The X server's process id. */
  pid: number;
  /**
   * Runs a program on this display in its own process group, in the sandbox when one is given;
   * ended with the display. Rejects (unavailable) when it cannot start.
   */
  launch(command: string, args: string[], options?: LaunchOptions): Promise<Launched>;
  /** Called once if the X server dies on its own. */
  onExit(listener: () => void): void;
  close(): Promise<void>;
};

/** A display of Benchtop's own (Xvfb), its cookie in a private folder. */
export type PrivateXDisplay = XDisplay & {
  /**
   * After its private folder was renamed to `to`: programs started from then on find the cookie
   * there. (The X server read it at start; the worker connected before.)
   */
  relocate(to: string): void;
};

export type LaunchOptions = {
  /** The host folder it starts in (inside a sandbox it starts in /workspace). */
  cwd?: string;
  env?: Record<string, string>;
  sandbox?: ComputerSandbox;
};

/** The display's cookie file as its sandbox sees it, in its /tmp. */
const AUTH_FILE = '.Xauthority';
/** The copy in its private folder, for Benchtop's own tools. */
const HOST_AUTH_FILE = 'Xauthority';

/**
 * A private X display: Xvfb picks a free display number itself (-displayfd, so two computers never
 * race for one). Only holders of the display's own cookie (in `privateDir`, and in `privateDir/tmp`,
 * which is its sandbox's /tmp) may connect: no other local process or user can read or drive it.
 * Nothing here ever touches the user's real screen.
 */
export async function startXDisplay(
  width: number,
  height: number,
  privateDir: string,
): Promise<PrivateXDisplay> {
  const tmp = join(privateDir, 'tmp');
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  // Two copies: Benchtop's own tools read the one the sandbox cannot touch.
  const cookie = xauthority(randomBytes(16));
  const authFile = join(privateDir, HOST_AUTH_FILE);
  await writeFile(authFile, cookie, { mode: 0o600, flag: 'wx' });
  await writeFile(join(tmp, AUTH_FILE), cookie, { mode: 0o600, flag: 'wx' });
  const xvfb = await launch(
    'Xvfb',
    [
      '-displayfd',
      '3',
      '-auth',
      authFile,
      '-screen',
      '0',
      `${width}x${height}x24`,
      '-nolisten',
      'tcp',
      '-noreset',
      // GLX loads Mesa into the X server: about 30 MB of an idle desktop's memory, for an
      // extension nothing on it uses (Chromium renders in software without a GPU either way).
      '-extension',
      'GLX',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  ).catch((error: NodeJS.ErrnoException) => {
    throw unavailable(
      error.code === 'ENOENT'
        ? `desktop computers need Xvfb, openbox and xterm: ${INSTALL_HINT}`
        : `Xvfb could not start: ${error.message}`,
    );
  });
  const number = await readDisplayNumber(xvfb);
  const name = `:${number}`;
  const env = { DISPLAY: name, XAUTHORITY: authFile };
  const children: Launched[] = [xvfb];
  let closing = false;
  const exitListeners: Array<() => void> = [];
  void xvfb.exited.then(() => {
    if (!closing) for (const listener of exitListeners) listener();
  });
  const display: PrivateXDisplay = {
    name,
    env,
    socket: `/tmp/.X11-unix/X${number}`,
    width,
    height,
    pid: xvfb.pid,
    async launch(command, args, options = {}) {
      const { sandbox } = options;
      const program = sandbox ? sandbox.wrap(command, args) : { file: command, args };
      const child = await launch(program.file, program.args, {
        cwd: sandbox ? sandbox.tmp : options.cwd,
        env: sandbox
          ? sandboxEnv({ ...options.env, ...sandboxDisplayEnv(name) })
          : { ...process.env, ...options.env, ...env },
        stdio: 'ignore',
      }).catch((error: Error) => {
        throw unavailable(
          `${command} could not start on the desktop (${INSTALL_HINT}): ${error.message}`,
        );
      });
      children.push(child);
      return child;
    },
    onExit: (listener) => exitListeners.push(listener),
    relocate(to) {
      env.XAUTHORITY = join(to, HOST_AUTH_FILE);
    },
    async close() {
      closing = true;
      for (const child of children.reverse()) child.kill();
      await sweepDisplay(name);
    },
  };
  return display;
}

/** DISPLAY and XAUTHORITY of a display as its sandbox sees them. */
export function sandboxDisplayEnv(name: string): Record<string, string> {
  return { DISPLAY: name, XAUTHORITY: `/tmp/${AUTH_FILE}` };
}

/**
 * An Xauthority file of one MIT-MAGIC-COOKIE-1 entry for any address and display number (family
 * "wild"): Xvfb loads it before its number is known, and it holds inside a sandbox, whose host
 * name differs. Each field is a big-endian 16-bit length and the bytes.
 */
export function xauthority(cookie: Buffer): Buffer {
  const field = (bytes: Buffer) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const family = Buffer.from([0xff, 0xff]);
  const empty = Buffer.alloc(0);
  return Buffer.concat([
    family,
    field(empty),
    field(empty),
    field(Buffer.from('MIT-MAGIC-COOKIE-1')),
    field(cookie),
  ]);
}

function readDisplayNumber(xvfb: Launched): Promise<number> {
  const { child } = xvfb;
  return new Promise((resolve, reject) => {
    let stderr = '';
    let out = '';
    let settled = false;
    const timer = setTimeout(
      () => fail(`Xvfb did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr.trim()}`),
      START_TIMEOUT_MS,
    );
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      xvfb.kill();
      reject(unavailable(message));
    };
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdio[3]!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (settled || !out.includes('\n')) return;
      settled = true;
      clearTimeout(timer);
      resolve(Number(out.trim()));
    });
    void xvfb.exited.then(({ code }) => fail(`Xvfb exited with code ${code}: ${stderr.trim()}`));
  });
}

/**
 * Ends whatever still runs on the display (a program a command started in the background, a
 * browser opened by navigate): any process whose environment says DISPLAY=:N. Linux only.
 */
async function sweepDisplay(name: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const pids = await processesWithEnv(`DISPLAY=${name}`);
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
