import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { unavailable } from '../../errors.js';
import type { WorkerAnswer, WorkerMessage, WorkerRequest } from './desktop-protocol.js';

const READY_TIMEOUT_MS = 10_000;

/**
 * The worker's entry: the built desktop-worker.js next to the bundle (the app), else the
 * TypeScript source run through tsx (headless from a clone, tests).
 */
function workerEntry(): { path: string; execArgv: string[] } {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [
    join(here, 'desktop-worker.js'),
    join(here, '..', 'desktop-worker.js'),
  ]) {
    if (existsSync(candidate)) return { path: candidate, execArgv: [] };
  }
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
  return { path: join(here, 'desktop-worker.ts'), execArgv: ['--import', tsx] };
}

/** Talks to one desktop worker process over its IPC channel. */
export class WorkerClient {
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private nextId = 1;
  private exited = false;
  private readonly exitListeners: Array<() => void> = [];

  private constructor(private readonly child: ChildProcess) {
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
  static async start(displayEnv: Record<string, string>): Promise<WorkerClient> {
    const entry = workerEntry();
    const child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      env: { ...process.env, ...displayEnv },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(unavailable('the desktop worker did not start in time')),
        READY_TIMEOUT_MS,
      );
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
    return new WorkerClient(child);
  }

  request<T = unknown>(request: WorkerRequest): Promise<T> {
    if (this.exited) return Promise.reject(new Error('the desktop worker ended'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, request } satisfies WorkerMessage);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  close(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
