import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';

/**
 * Programs started from a small helper process instead of Benchtop's own.
 *
 * Node starts a program by fork() on Linux (libuv), in the event loop's thread: the kernel copies
 * the page tables of the whole process first, so every start stops the server for a time that
 * grows with its memory (about 25 ms at 450 MB, 38 at 850, on a two-core VM), and every other
 * computer's actions, frames and events wait. A helper of ~40 MB, started once, forks in about
 * 5 ms off that thread; the server only exchanges messages with it. What a program writes comes
 * over the helper's IPC channel; its pid is real, so signals go to it (or its group) directly.
 *
 * The helper holds no state worth keeping. When Benchtop's end closes its channel (a SIGKILL
 * included, where no exit handler runs) it kills what it started, with its own process group.
 * When it dies, every program it started is killed and reported as ended by SIGKILL, and the next
 * start makes a new helper. Where none can run, programs start from this process as before.
 */

/** The helper's process title (what `ps` shows): it serves this whole process, not one server. */
export const HELPER_TITLE = 'benchtop-spawn-relay';

/**
 * The descriptors the relay carries, each piped or ignored: stdin, stdout, stderr, and a fourth
 * one a program writes to (Xvfb's -displayfd, bwrap's --info-fd) when given.
 */
export type RelayedStdio = Array<'pipe' | 'ignore'>;

/**
 * The stdio a relayed program can have, as three or four entries; undefined when it needs Node's
 * own.
 */
export function relayedStdio(stdio: StdioOptions | undefined): RelayedStdio | undefined {
  if (stdio === undefined || stdio === 'pipe') return ['pipe', 'pipe', 'pipe'];
  if (stdio === 'ignore') return ['ignore', 'ignore', 'ignore'];
  if (!Array.isArray(stdio) || stdio.length > 4) return undefined;
  const entries: RelayedStdio = [];
  for (let fd = 0; fd < Math.max(stdio.length, 3); fd++) {
    // Node's defaults: the standard three piped, others ignored.
    const entry: unknown = stdio[fd] ?? (fd < 3 ? 'pipe' : 'ignore');
    if (entry === 'pipe' || entry === 'ignore') entries.push(entry);
    else return undefined;
  }
  return entries;
}

/** A descriptor whose output the helper forwards. */
type OutputFd = 1 | 2 | 3;

type SpawnRequest = {
  op: 'spawn';
  id: number;
  file: string;
  args: string[];
  cwd?: string;
  env: Record<string, string | undefined>;
  detached: boolean;
  stdio: RelayedStdio;
};
type Control =
  | SpawnRequest
  | { op: 'write'; id: number; data: Uint8Array }
  | { op: 'end'; id: number }
  | { op: 'pause' | 'resume' | 'destroy'; id: number; fd: OutputFd };
type SpawnError = {
  message: string;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
};
type Report =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'failed'; id: number; error: SpawnError }
  | { op: 'data'; id: number; fd: OutputFd; data: Uint8Array }
  | { op: 'eof'; id: number; fd: OutputFd }
  | { op: 'exit' | 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

/**
 * The helper, run by `node -e` (CommonJS, nothing but Node's own modules). It forwards output as
 * it comes, pauses a pipe when told or while the channel has not taken what came before (so a
 * program that outruns its reader blocks, as with a pipe of Benchtop's own), and ignores the
 * terminal's signals: Benchtop ends it.
 */
const HELPER = String.raw`
process.title = process.argv[1];
const { spawn } = require('node:child_process');
const children = new Map();
const QUEUED = 1024 * 1024;
const send = (report, sent) => { if (process.connected) process.send(report, sent); };
const describe = (error) => ({ message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path });
for (const signal of ['SIGINT', 'SIGHUP', 'SIGTERM']) process.on(signal, () => {});
send({ op: 'ready' });
process.on('message', (m) => {
  const child = children.get(m.id);
  if (m.op === 'spawn') {
    let started;
    try {
      started = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: m.detached, stdio: m.stdio });
    } catch (error) {
      return send({ op: 'failed', id: m.id, error: describe(error) });
    }
    children.set(m.id, started);
    started.group = m.detached;
    started.on('error', (error) => {
      if (started.pid === undefined) { children.delete(m.id); send({ op: 'failed', id: m.id, error: describe(error) }); }
    });
    started.on('spawn', () => send({ op: 'spawned', id: m.id, pid: started.pid }));
    started.flows = [];
    for (const fd of [1, 2, 3]) {
      const stream = started.stdio[fd];
      if (!stream) continue;
      // Paused while its reader asks (held) or while a megabyte of it waits to be written to the
      // channel (queued): what the program writes then stays in its pipe, which blocks it.
      const flow = (started.flows[fd] = { stream, held: false, queued: 0 });
      stream.on('data', (data) => {
        flow.queued += data.length;
        send({ op: 'data', id: m.id, fd, data }, () => {
          flow.queued -= data.length;
          if (flow.queued < QUEUED / 2 && !flow.held) stream.resume();
        });
        if (flow.queued >= QUEUED) stream.pause();
      });
      stream.on('end', () => send({ op: 'eof', id: m.id, fd }));
    }
    started.stdin?.on('error', () => {});
    started.on('exit', (code, signal) => send({ op: 'exit', id: m.id, code, signal }));
    started.on('close', (code, signal) => { children.delete(m.id); send({ op: 'close', id: m.id, code, signal }); });
  } else if (!child) {
    return;
  } else if (m.op === 'write') child.stdin?.write(m.data);
  else if (m.op === 'end') child.stdin?.end();
  else if (m.op === 'destroy') child.stdio[m.fd]?.destroy();
  else if (child.flows[m.fd]) {
    const flow = child.flows[m.fd];
    flow.held = m.op === 'pause';
    if (flow.held) flow.stream.pause();
    else if (flow.queued < QUEUED / 2) flow.stream.resume();
  }
});
process.on('disconnect', () => {
  for (const child of children.values()) {
    if (child.group) try { process.kill(-child.pid, 'SIGKILL'); } catch {}
  }
  process.kill(0, 'SIGKILL');
});
`;

/** One program's output stream, fed by the helper; reading slowly pauses the program's pipe. */
class RelayedOutput extends Readable {
  private held = false;
  private atEnd = false;

  constructor(private readonly control: (op: 'pause' | 'resume' | 'destroy') => void) {
    super({ highWaterMark: 1024 * 1024 });
  }

  feed(data: Uint8Array): void {
    if (this.destroyed || this.atEnd) return;
    const chunk = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (!this.push(chunk) && !this.held) {
      this.held = true;
      this.control('pause');
    }
  }

  /** The program closed its end of the pipe: nothing more comes. */
  eof(): void {
    if (this.destroyed || this.atEnd) return;
    this.atEnd = true;
    this.push(null);
  }

  override _read(): void {
    if (!this.held) return;
    this.held = false;
    this.control('resume');
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded) this.control('destroy');
    callback(error);
  }
}

/**
 * A program started by the helper, as much of a ChildProcess as Benchtop uses: its pid, its
 * stdin/stdout/stderr and fourth descriptor, exitCode and signalCode, kill(), and the events
 * 'spawn', 'error' (it could not start), 'exit' and 'close' (exited, its output delivered).
 */
export class RelayedChild extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdin: Writable | null;
  readonly stdout: RelayedOutput | null;
  readonly stderr: RelayedOutput | null;
  private readonly fourth: RelayedOutput | null;
  readonly stdio: ChildProcess['stdio'];

  constructor(
    readonly id: number,
    stdio: RelayedStdio,
    /** The leader of a process group of its own. */
    readonly group: boolean,
    control: (message: Control) => void,
  ) {
    super();
    this.stdin =
      stdio[0] === 'pipe'
        ? new Writable({
            write: (chunk: Buffer, _encoding, callback) => {
              control({ op: 'write', id, data: chunk });
              callback();
            },
            final: (callback) => {
              control({ op: 'end', id });
              callback();
            },
          })
        : null;
    const output = (fd: OutputFd) =>
      stdio[fd] === 'pipe' ? new RelayedOutput((op) => control({ op, id, fd })) : null;
    this.stdout = output(1);
    this.stderr = output(2);
    this.fourth = output(3);
    this.stdio = [this.stdin, this.stdout, this.stderr, this.fourth ?? undefined, undefined];
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.pid === undefined || this.exitCode !== null || this.signalCode !== null) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private output(fd: OutputFd): RelayedOutput | null {
    return [this.stdout, this.stderr, this.fourth][fd - 1]!;
  }

  /** What the helper reports about this program. */
  report(report: Report): void {
    switch (report.op) {
      case 'spawned':
        this.pid = report.pid;
        this.emit('spawn');
        break;
      case 'failed':
        this.emit('error', Object.assign(new Error(report.error.message), report.error));
        break;
      case 'data':
        this.output(report.fd)?.feed(report.data);
        break;
      case 'eof':
        this.output(report.fd)?.eof();
        break;
      case 'exit':
        this.exited(report.code, report.signal);
        break;
      case 'close':
        this.closed(report.code, report.signal);
        break;
    }
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
  }

  /** 'close' once each output stream has ended (read to its end) or was destroyed. */
  private closed(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited(code, signal);
    const streams = [this.stdout, this.stderr, this.fourth].filter((stream) => stream !== null);
    let open = streams.length;
    const one = () => {
      if (--open === 0) this.emit('close', code, signal);
    };
    for (const stream of streams) {
      if (stream.closed) one();
      else {
        stream.once('close', one);
        stream.eof();
      }
    }
    if (streams.length === 0) this.emit('close', code, signal);
  }
}

/** The helper process and the programs it runs for this process. */
class Relay {
  private helper: ChildProcess | undefined;
  /** Settles once the current helper runs (true) or could not (false). */
  private ready: Promise<boolean> | undefined;
  /** No helper ever ran here (a runtime that cannot run itself as Node): programs start direct. */
  private broken = false;
  private readonly running = new Map<number, RelayedChild>();
  private nextId = 1;

  constructor(private readonly onHelper: (helper: ChildProcess) => void) {}

  /** Whether programs can start from a helper; starts one when none runs. */
  available(): Promise<boolean> {
    if (this.broken) return Promise.resolve(false);
    this.ready ??= this.start();
    return this.ready;
  }

  /** Starts a program; call once available() said true. */
  spawn(file: string, args: string[], options: RelayedSpawn): RelayedChild {
    const id = this.nextId++;
    const helper = this.helper;
    const child = new RelayedChild(id, options.stdio, options.detached, (message) => {
      if (helper?.connected) helper.send(message);
    });
    if (!helper?.connected) {
      // It ended since it said it was ready; the caller hears of it as a failed start.
      setImmediate(() => child.report({ op: 'failed', id, error: { message: HELPER_GONE } }));
      return child;
    }
    this.running.set(id, child);
    child.once('close', () => this.forget(id));
    child.once('error', () => this.forget(id));
    this.refresh();
    helper.send({
      op: 'spawn',
      id,
      file,
      args,
      cwd: options.cwd,
      env: { ...options.env },
      detached: options.detached,
      stdio: options.stdio,
    } satisfies Control);
    return child;
  }

  private start(): Promise<boolean> {
    // Electron runs its own binary as Node only when told to.
    const env = process.versions.electron
      ? { ...process.env, ELECTRON_RUN_AS_NODE: '1' }
      : process.env;
    const helper = spawn(process.execPath, ['-e', HELPER, HELPER_TITLE], {
      env,
      detached: true,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.helper = helper;
    let ran = false;
    // A binary that took `-e` for something else (an app that opened instead) is not waited for.
    const late = setTimeout(() => helper.kill('SIGKILL'), READY_TIMEOUT_MS);
    return new Promise((resolve) => {
      helper.on('error', () => {});
      helper.once('spawn', () => this.onHelper(helper));
      helper.on('message', (report: Report | { op: 'ready' }) => {
        if (report.op === 'ready') {
          clearTimeout(late);
          ran = true;
          this.refresh();
          return resolve(true);
        }
        this.running.get(report.id)?.report(report);
      });
      helper.once('close', () => {
        clearTimeout(late);
        if (!ran) this.broken = true;
        resolve(false);
        this.lost(helper);
      });
    });
  }

  private forget(id: number): void {
    this.running.delete(id);
    this.refresh();
  }

  /**
   * The helper and its channel keep this process alive only while it starts or a program of it
   * runs (an idle helper must not keep a command-line run from ending).
   */
  private refresh(): void {
    const helper = this.helper;
    if (!helper) return;
    const channel = helper.channel as { ref(): void; unref(): void } | null | undefined;
    if (this.running.size > 0) {
      helper.ref();
      channel?.ref();
    } else {
      helper.unref();
      channel?.unref();
    }
  }

  /** The helper died: what it ran is killed and ends by SIGKILL; the next start makes another. */
  private lost(helper: ChildProcess): void {
    if (this.helper === helper) {
      this.helper = undefined;
      this.ready = undefined;
    }
    for (const child of [...this.running.values()]) {
      if (child.pid === undefined) {
        child.report({ op: 'failed', id: child.id, error: { message: HELPER_GONE } });
        continue;
      }
      try {
        process.kill(child.group ? -child.pid : child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      child.report({ op: 'close', id: child.id, code: null, signal: 'SIGKILL' });
    }
  }
}

const HELPER_GONE = 'the helper process that starts programs ended';
/** How long a new helper may take to say it runs (~50 ms here; a loaded machine takes longer). */
const READY_TIMEOUT_MS = 10_000;

type RelayedSpawn = {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  detached: boolean;
  stdio: RelayedStdio;
};

let relay: Relay | undefined;

/**
 * The relay, with its helper running; undefined when no helper can run here (the caller starts
 * programs itself). `onHelper` learns of each helper process as it starts.
 */
export async function spawnRelay(
  onHelper: (helper: ChildProcess) => void,
): Promise<Pick<Relay, 'spawn'> | undefined> {
  relay ??= new Relay(onHelper);
  return (await relay.available()) ? relay : undefined;
}
