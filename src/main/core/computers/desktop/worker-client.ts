import type { ChildProcess } from 'node:child_process';
import { unavailable } from '../../errors.js';
import { launch, type Launched } from '../../runtime/process-supervisor.js';
import type {
  WorkerAnswer,
  WorkerMessage,
  WorkerRequest,
  WorkerResult,
} from './desktop-protocol.js';

const READY_TIMEOUT_MS = 10_000;

/**
 * The worker's entry module, given where the app is composed: the built desktop-worker.js next
 * to the bundle; `execArgv` for a runner of the sources (the tests' tsx).
 */
export type WorkerEntry = { path: string; execArgv?: string[] };

/** Talks to one desktop worker process over its IPC channel. */
export class WorkerClient {
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private nextId = 1;
  private exited = false;
  private readonly exitListeners: Array<() => void> = [];

  private readonly child: ChildProcess;

  private constructor(private readonly worker: Launched<ChildProcess>) {
    const { child } = worker;
    this.child = child;
    child.on('message', (answer: WorkerAnswer) => {
      const call = this.pending.get(answer.id);
      if (!call) return;
      this.pending.delete(answer.id);
      if (answer.ok) call.resolve(answer.result);
      else call.reject(new Error(answer.error));
    });
    child.once('exit', () => {
      this.exited = true;
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
    // In Benchtop's own process group: it also ends when its IPC channel closes. It collects
    // its screen grabs itself (see desktop-worker.ts), with the gc() that --expose-gc gives it.
    const worker = await launch(entry.path, [], {
      node: { execArgv: [...(entry.execArgv ?? []), '--expose-gc'], serialization: 'advanced' },
      group: false,
      env: { ...process.env, ...displayEnv },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    }).catch((error: Error) => {
      throw unavailable(`the desktop worker could not start: ${error.message}`);
    });
    const { child } = worker;
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        worker.kill();
        reject(unavailable('the desktop worker did not start in time'));
      }, READY_TIMEOUT_MS);
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(
          unavailable(
            `the desktop worker could not start (nut-js native support missing?): exit ${code} ${stderr.trim().split('\n').at(-1) ?? ''}`,
          ),
        );
      });
    });
    return new WorkerClient(worker);
  }

  request<R extends WorkerRequest>(request: R): Promise<WorkerResult<R>> {
    if (this.exited) return Promise.reject(new Error('the desktop worker ended'));
    const id = this.nextId++;
    return new Promise<WorkerResult<R>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, request } satisfies WorkerMessage);
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
