import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../errors.js';
import { launch, runProgram, type Launched } from '../runtime/process-supervisor.js';
import { startTimeOf } from '../runtime/process-table.js';
import { programBinds, systemBinds } from './system-binds.js';

/** Where a computer's workspace appears inside its sandbox. */
export const SANDBOX_WORKSPACE = '/workspace';
const START_TIMEOUT_MS = 10_000;
/** How long a close waits for the sandbox's init to be gone after its kill. */
const INIT_EXIT_MS = 2000;
const INSTALL_HINT = 'apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap';

export type SandboxSupport = { available: true } | { available: false; reason: string };

/** A program and its arguments, as spawn takes them. */
export type Invocation = { file: string; args: string[] };

export type SandboxOptions = {
  /** The computer's workspace on the host, seen at /workspace. */
  workspace: string;
  /** A host folder only this computer uses; its `tmp` is the sandbox's /tmp. */
  privateDir: string;
  /** An X display's socket (/tmp/.X11-unix/XN on the host) the sandbox may connect to. */
  xSocket?: string;
  /** A program outside /usr the sandbox runs (Chromium), made visible read-only. */
  program?: string;
  /** Share the machine's network (default); false: a network namespace with nothing in it. */
  network?: boolean;
};

/** The sandbox's user: never root, so a command has no capability even inside its namespaces. */
const INSIDE_ID = process.getuid?.() || 1000;

let support: Promise<SandboxSupport> | undefined;
/** Whether this nsenter sets the working directory in the namespace (--wdns, util-linux 2.38). */
let setsDir: Promise<boolean> | undefined;

/**
 * Starts a program in `dir` with its arguments, for an nsenter without --wdns: `sh -c` with this
 * script, then `sh`, `dir`, the program and its arguments.
 */
export const CD_THEN_EXEC = 'cd -- "$1" && shift && exec "$@"';

/**
 * Whether bubblewrap sandboxes can be made here: bwrap and nsenter are installed and a trial
 * sandbox starts (user namespaces may be forbidden, e.g. by AppArmor on Ubuntu 24.04). Checked
 * once per process.
 */
export function sandboxSupport(): Promise<SandboxSupport> {
  support ??= probe();
  return support;
}

async function probe(): Promise<SandboxSupport> {
  if (process.platform !== 'linux') {
    return { available: false, reason: 'sandboxes need Linux (bubblewrap and namespaces)' };
  }
  if ((await run('bwrap', ['--version']).catch(() => undefined)) === undefined) {
    return { available: false, reason: `bubblewrap is not installed (${INSTALL_HINT})` };
  }
  if ((await run('nsenter', ['--version']).catch(() => undefined)) === undefined) {
    return { available: false, reason: 'nsenter is not installed (apt-get install util-linux)' };
  }
  const trial = await run('bwrap', [...(await baseArgs()), '--', '/bin/true']).catch(
    (error: Error & { stderr?: string }) => error,
  );
  if (trial instanceof Error) {
    const detail = (trial.stderr || trial.message).trim().split('\n')[0];
    return {
      available: false,
      reason: `bubblewrap cannot create a sandbox here (${detail}); unprivileged user namespaces may be switched off (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)`,
    };
  }
  return { available: true };
}

async function baseArgs(): Promise<string[]> {
  return [
    '--unshare-user',
    '--uid',
    String(INSIDE_ID),
    '--gid',
    String(INSIDE_ID),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--hostname',
    'benchtop',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...(await systemBinds()),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--clearenv',
  ];
}

/**
 * One computer's sandbox (bubblewrap): its own user, process, IPC and host-name namespaces; the
 * system folders read-only; its workspace at /workspace and its own /tmp, both writable; no data
 * dir, no home, no other workspace, no variable of Benchtop's environment. Everything the computer
 * runs (shell commands, a desktop's window manager, terminal and browser) joins this one sandbox,
 * so a program started in the background by one command is there for the next, and closing the
 * sandbox ends every process in it, however it detached.
 */
export class ComputerSandbox {
  private exitListeners: Array<() => void> = [];
  private closing = false;

  private constructor(
    private readonly bwrap: Launched,
    private readonly innerPid: number,
    /** When the init started (with its pid, it names that process for good); Linux only. */
    private readonly innerStart: string | undefined,
    private options: SandboxOptions,
    private readonly nsenterSetsDir: boolean,
  ) {
    void bwrap.exited.then(() => {
      if (!this.closing) for (const listener of this.exitListeners) listener();
    });
  }

  static async start(options: SandboxOptions): Promise<ComputerSandbox> {
    const supported = await sandboxSupport();
    if (!supported.available) throw unavailable(supported.reason);
    setsDir ??= run('nsenter', ['--help']).then(
      (help) => help.includes('--wdns'),
      () => false,
    );
    const tmp = join(options.privateDir, 'tmp');
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    const args = [
      ...(await baseArgs()),
      '--bind',
      tmp,
      '/tmp',
      '--bind',
      options.workspace,
      SANDBOX_WORKSPACE,
      ...(options.xSocket ? ['--ro-bind', options.xSocket, options.xSocket] : []),
      ...programBinds(options.program),
      ...(options.network === false ? ['--unshare-net'] : []),
      '--chdir',
      SANDBOX_WORKSPACE,
      '--info-fd',
      '3',
      '--',
      // The sandbox lives as long as this waits; bwrap's own init reaps what others leave behind.
      // It says when it runs: only then are the sandbox's user and mounts in place for others
      // to join (bwrap tells its init's pid a moment before).
      '/bin/sh',
      '-c',
      'echo ready; exec sleep infinity',
    ];
    const bwrap = await launch('bwrap', args, {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: {},
    }).catch((error: Error) => {
      throw unavailable(`the computer's sandbox could not start: ${error.message}`);
    });
    const innerPid = await readChildPid(bwrap);
    return new ComputerSandbox(bwrap, innerPid, startTimeOf(innerPid), options, await setsDir);
  }

  /**
   * After its workspace and private folder were renamed on the host (a spare desktop handed to a
   * computer): its mounts follow the folders themselves, only the host paths it reports change.
   */
  relocate(paths: { workspace: string; privateDir: string }): void {
    this.options = { ...this.options, ...paths };
  }

  /** The sandbox's /tmp on the host. */
  get tmp(): string {
    return join(this.options.privateDir, 'tmp');
  }

  get running(): boolean {
    return this.bwrap.running && !this.closing;
  }

  /**
   * Runs `file args` inside the sandbox as the sandbox's user, in `dir` (as the sandbox sees it;
   * default /workspace). nsenter sets the directory itself where it can, which spares a shell
   * (about 2 ms of a command's 10 here).
   */
  wrap(file: string, args: string[], dir?: string): Invocation {
    const [where, program] =
      dir === undefined
        ? [['--wd'], [file, ...args]]
        : this.nsenterSetsDir
          ? [[`--wdns=${dir}`], [file, ...args]]
          : [['--wd'], ['/bin/sh', '-c', CD_THEN_EXEC, 'sh', dir, file, ...args]];
    return {
      file: 'nsenter',
      args: [
        '--target',
        String(this.innerPid),
        '--user',
        '--mount',
        '--pid',
        '--ipc',
        '--uts',
        // Joined only when it is the sandbox's own: the machine's belongs to the machine's user
        // namespace, which an ordinary user may not enter.
        ...(this.options.network === false ? ['--net'] : []),
        '--root',
        ...where,
        '--setuid',
        String(INSIDE_ID),
        '--setgid',
        String(INSIDE_ID),
        '--',
        ...program,
      ],
    };
  }

  /**
   * A host program (for Playwright, which starts browsers by path) that runs `file` in the sandbox
   * with the arguments it is given, host paths into the workspace rewritten to /workspace (the
   * browser's profile). It lives outside the sandbox's reach: only Benchtop may change it.
   */
  async launcher(name: string, file: string): Promise<string> {
    const path = join(this.options.privateDir, name);
    const { file: enter, args } = this.wrap(file, []);
    const script = [
      '#!/bin/sh',
      `W=${shellQuote(this.options.workspace)}`,
      'for a do',
      '  shift',
      '  case "$a" in *"$W"*) a="${a%%"$W"*}' + SANDBOX_WORKSPACE + '${a#*"$W"}" ;; esac',
      '  set -- "$@" "$a"',
      'done',
      `exec ${[enter, ...args].map(shellQuote).join(' ')} "$@"`,
      '',
    ].join('\n');
    await writeFile(path, script, { mode: 0o700 });
    return path;
  }

  /**
   * The host path of a folder given as the sandbox sees it (relative paths are inside
   * /workspace), or undefined when it is outside what the computer may write to.
   */
  hostPath(path: string): string | undefined {
    const inside = posix.resolve(SANDBOX_WORKSPACE, path);
    for (const [mount, host] of [
      [SANDBOX_WORKSPACE, this.options.workspace],
      ['/tmp', this.tmp],
    ] as const) {
      if (inside === mount) return host;
      if (inside.startsWith(`${mount}/`)) return join(host, inside.slice(mount.length + 1));
    }
    return undefined;
  }

  /** Called once if the sandbox ends on its own (its last process was killed from inside). */
  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  /** Whether the sandbox's init still runs (not a zombie, and not another process given its pid). */
  private initRuns(): boolean {
    return this.innerStart !== undefined && startTimeOf(this.innerPid) === this.innerStart;
  }

  /** Ends every process of the sandbox and removes its /tmp. */
  async close(): Promise<void> {
    this.closing = true;
    // The sandbox's init runs in a session of its own, out of the reach of the kill of bwrap's
    // group, and outlived it (waiting on in a running Benchtop, one per desktop ever deleted):
    // ended itself, it takes every process of its pid namespace with it.
    if (this.initRuns()) process.kill(this.innerPid, 'SIGKILL');
    if (this.bwrap.running) {
      this.bwrap.kill();
      await this.bwrap.exited;
    }
    for (let waited = 0; waited < INIT_EXIT_MS && this.initRuns(); waited += 20) {
      await sleep(20);
    }
    await rm(this.options.privateDir, { recursive: true, force: true }).catch(() => {});
  }
}

/** The environment every sandboxed program starts from: nothing of Benchtop's own. */
export function sandboxEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: SANDBOX_WORKSPACE,
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

function readChildPid(bwrap: Launched): Promise<number> {
  const { child } = bwrap;
  return new Promise((resolve, reject) => {
    let info = '';
    let stderr = '';
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      bwrap.kill();
      reject(unavailable(`the computer's sandbox could not start: ${message}`));
    };
    const timer = setTimeout(() => fail('bwrap did not answer in time'), START_TIMEOUT_MS);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let ready = false;
    const check = () => {
      const match = /"child-pid":\s*(\d+)/.exec(info);
      if (!match || !ready || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(Number(match[1]));
    };
    child.stdio[3]!.on('data', (chunk: Buffer) => {
      info += chunk.toString();
      check();
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      ready ||= chunk.toString().includes('ready');
      check();
    });
    void bwrap.exited.then(({ code }) => fail(stderr.trim() || `bwrap exited with code ${code}`));
  });
}

/** A program's output; rejects with its stderr when it cannot start, fails or times out. */
async function run(file: string, args: string[]): Promise<string> {
  const ran = await runProgram(file, args, { env: {}, timeoutMs: START_TIMEOUT_MS });
  if (ran.code !== 0) {
    const reason = ran.timedOut ? 'timed out' : `exited with ${ran.code ?? ran.signal}`;
    throw Object.assign(new Error(`${file} ${reason}`), { stderr: ran.stderr });
  }
  return ran.stdout + ran.stderr;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
