import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unavailable } from '../../errors.js';
import { launch, type Launched } from '../../runtime/process-supervisor.js';
import type {
  WorkerAnswer,
  WorkerMessage,
  WorkerRequest,
  WorkerResult,
} from './desktop-protocol.js';
import { onMessages, sendMessage } from './worker-channel.js';

const READY_TIMEOUT_MS = 10_000;
/** Characters of the worker's stderr kept (its last line names why it could not start). */
const STDERR_KEPT = 4096;

/**
 * The worker's entry module, given where the app is composed: the built desktop-worker.js next
 * to the bundle; `execArgv` for a runner of the sources (the tests' tsx).
 */
export type WorkerEntry = { path: string; execArgv?: string[] };

/**
 * Talks to one desktop worker process over a Unix socket it connects to (worker-channel.ts): the
 * worker starts from the spawn relay like any program, not forked by the server.
 */
export class WorkerClient {
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private nextId = 1;
  private exited = false;
  private readonly exitListeners: Array<() => void> = [];

  private constructor(
    private readonly worker: Launched,
    private readonly socket: Socket,
  ) {
    onMessages(socket, (message) => {
      const answer = message as WorkerAnswer;
      const call = this.pending.get(answer.id);
      if (!call) return;
      this.pending.delete(answer.id);
      if (answer.ok) call.resolve(answer.result);
      else call.reject(new Error(answer.error));
    });
    void worker.exited.then(() => {
      this.exited = true;
      socket.destroy();
      for (const call of this.pending.values()) call.reject(new Error('the desktop worker ended'));
      this.pending.clear();
      for (const listener of this.exitListeners) listener();
    });
  }

  /** `displayEnv`: DISPLAY and XAUTHORITY of the display it drives. */
  static async start(
    displayEnv: Record<string, string>,
    entry: WorkerEntry,
  ): Promise<WorkerClient> {
    // The socket lives in a folder only this user can enter, until the worker has connected.
    const dir = await mkdtemp(join(tmpdir(), 'benchtop-worker-'));
    const listener = createServer();
    try {
      const path = join(dir, 'socket');
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(path, resolve);
      });
      const connected = new Promise<Socket>((resolve) => listener.once('connection', resolve));
      // It collects its screen grabs itself (see desktop-worker.ts), with the gc() that
      // --expose-gc gives it. Electron runs its own binary as Node only when told to.
      const worker = await launch(
        process.execPath,
        [...(entry.execArgv ?? []), '--expose-gc', entry.path, path],
        {
          group: false,
          env: {
            ...process.env,
            ...displayEnv,
            ...(process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}),
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      ).catch((error: Error) => {
        throw unavailable(`the desktop worker could not start: ${error.message}`);
      });
      // Read for as long as it runs (a full pipe would stop it); only its end says why a start
      // failed, so that is all that is kept.
      let stderr = '';
      worker.child.stderr!.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT);
      });
      let timer: NodeJS.Timeout | undefined;
      const socket = await Promise.race([
        connected,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            worker.kill();
            reject(unavailable('the desktop worker did not start in time'));
          }, READY_TIMEOUT_MS);
        }),
        worker.exited.then(({ code }) => {
          throw unavailable(
            `the desktop worker could not start (nut-js native support missing?): exit ${code} ${stderr.trim().split('\n').at(-1) ?? ''}`,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      socket.on('error', () => {});
      const client = new WorkerClient(worker, socket);
      // Its first answer (id 0) says it runs.
      await new Promise<void>((resolve, reject) => {
        client.pending.set(0, { resolve: () => resolve(), reject });
      });
      return client;
    } finally {
      listener.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  request<R extends WorkerRequest>(request: R): Promise<WorkerResult<R>> {
    if (this.exited) return Promise.reject(new Error('the desktop worker ended'));
    const id = this.nextId++;
    return new Promise<WorkerResult<R>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      sendMessage(this.socket, { id, request } satisfies WorkerMessage);
    });
  }

  get pid(): number {
    return this.worker.pid;
  }

  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  close(): void {
    if (!this.exited) this.worker.kill();
  }
}
