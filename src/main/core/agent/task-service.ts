import type { Budgets, StartTaskBody, Task, TaskEvent, TaskStatus } from '../../../shared/tasks.js';
import { EXIT_CODES, MAX_TASK_STEPS, unstartedTaskFields } from '../../../shared/tasks.js';
import type { ComputerRegistry } from '../computers/computer-registry.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { BenchtopError, invalidRequest, notFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { asStorageError } from '../storage-errors.js';
import type { ModelRegistry } from '../models/model-registry.js';
import type { TaskFilter } from '../store/task-store.js';
import { TaskRun, type TaskDeps } from './task-run.js';
import type { SessionSpec } from '../computers/computer-session.js';
import { replayableSteps, type RecordedStep } from './task-replay.js';
import { taskScript } from './task-script.js';
import type { ReplayTaskBody, ScriptLanguage } from '../../../shared/task-scripts.js';

/** A replay: the task it repeats and its recorded steps. */
type Replay = { of: string; steps: RecordedStep[]; heal: boolean; result: string | null };

export type TaskServiceDeps = TaskDeps & { computers: ComputerRegistry; models: ModelRegistry };

const SHUTDOWN = 'shutdown: Benchtop stopped while the task was running';

/** Agent tasks: start, inspect, steer and end them; their runs live here. */
export class TaskService {
  private readonly runs = new Map<string, TaskRun>();
  private readonly loops = new Set<Promise<void>>();

  constructor(private readonly deps: TaskServiceDeps) {
    for (const { task } of deps.store.unfinished()) {
      task.status = 'failed';
      task.paused_reason = null;
      task.paused_by = null;
      task.exit_code = EXIT_CODES.failed;
      task.error = SHUTDOWN;
      task.updated_at = now();
      deps.store.update(task);
      const seq = deps.store.nextSeq(task.task_id);
      deps.store.append(task.task_id, seq, {
        type: 'failed',
        task_id: task.task_id,
        step: task.steps,
        timestamp: task.updated_at,
        error: SHUTDOWN,
      });
    }
  }

  /**
   * Starts a task on a new computer, or on `computer_id`; answers once it runs. With `replay`, it
   * repeats another task's recorded steps instead of asking the model.
   */
  async start(org: string, body: StartTaskBody, replay?: Replay): Promise<TaskRun> {
    const model = this.deps.models.resolve(body.model).name;
    const session = await this.computerFor(org, body);
    const ownsComputer = !body.computer_id && !body.persistent;
    const at = now();
    const task: Task = {
      task_id: newId('task'),
      status: 'running',
      exit_code: null,
      computer_id: session.id,
      instruction: body.instruction,
      model,
      steps: 0,
      max_steps: body.max_steps,
      created_at: at,
      updated_at: at,
      result: null,
      error: null,
      ...unstartedTaskFields(body),
      replay_of: replay?.of ?? null,
    };
    try {
      this.deps.store.insert(org, task);
    } catch (error) {
      // Nobody could follow or end a task that was never stored: the computer made for it goes.
      if (!body.computer_id) {
        await this.deps.computers.delete(org, session.id, endedByTask(task)).catch(() => {});
      }
      throw asStorageError('store the task', error);
    }
    const run = new TaskRun(task, session, this.deps, {
      org,
      temperature: body.temperature,
      screenshotMode: body.screenshot_mode,
      ownsComputer,
      stallDetection: body.stall_detection,
      endComputer: () => this.deps.computers.delete(org, session.id, endedByTask(task)),
      ...(replay && { replay }),
    });
    this.runs.set(task.task_id, run);
    const loop = run.run().finally(() => {
      // A task whose end the disk refused is answered from memory; the store still says running.
      if (run.stored) this.runs.delete(task.task_id);
      this.loops.delete(loop);
    });
    this.loops.add(loop);
    return run;
  }

  /**
   * A new task that repeats task `id`'s performed actions without the model (docs/API.md §18), on
   * `computer_id` or on a new computer like the one the task ran on.
   */
  async replay(org: string, id: string, body: ReplayTaskBody): Promise<TaskRun> {
    const original = this.get(org, id);
    const steps = replayableSteps(original, this.deps.store.events(id));
    if (steps.length === 0) {
      throw invalidRequest(`task ${id} performed no action; there is nothing to replay`);
    }
    const spec = this.specOf(org, original.computer_id);
    const kind = spec?.kind ?? kindOf(steps);
    const start = {
      instruction: original.instruction,
      kind,
      computer_id: body.computer_id,
      model: original.model,
      agent_type: 'default',
      max_steps: Math.min(MAX_TASK_STEPS, steps.length),
      screenshot_mode: 'url',
      stall_detection: false,
      ...(!body.computer_id &&
        spec && { viewport_width: spec.display.width, viewport_height: spec.display.height }),
    } satisfies StartTaskBody;
    return this.start(org, start, { of: id, steps, heal: body.heal, result: original.result });
  }

  /** The script of task `id`'s performed actions against the official SDK. */
  script(org: string, id: string, lang: ScriptLanguage): string {
    const task = this.get(org, id);
    const steps = replayableSteps(task, this.deps.store.events(id));
    const spec = this.specOf(org, task.computer_id);
    const kind = spec?.kind ?? kindOf(steps);
    const display = spec && { width: spec.display.width, height: spec.display.height };
    return taskScript({ task, steps, kind, display, lang });
  }

  /** The computer a task ran on, while the registry still knows it. */
  private specOf(org: string, computerId: string): SessionSpec | undefined {
    try {
      return this.deps.computers.get(org, computerId).spec;
    } catch {
      return undefined;
    }
  }

  get(org: string, id: string): Task {
    const run = this.runs.get(id);
    if (run?.org === org) return structuredClone(run.task);
    const task = this.deps.store.get(org, id);
    if (!task) throw notFound(`no task ${id}`);
    return task;
  }

  list(org: string, filter?: TaskFilter): Task[] {
    return this.deps.store.list(org, filter);
  }

  /** `by`, in these five: who asked, shown on the task's timeline (TaskEvent's `by`). */
  pause(org: string, id: string, by?: string): { status: TaskStatus } {
    const run = this.running(org, id, 'paused', ['running']);
    run.pause(by);
    return { status: run.task.status };
  }

  /** Continues a paused task; `budgets` raises the ones it reached (or any other). */
  resume(org: string, id: string, budgets?: Budgets, by?: string): { status: TaskStatus } {
    const run = this.running(org, id, 'resumed', ['paused']);
    run.resume(budgets, by);
    return { status: run.task.status };
  }

  /** Pauses the task for a person; on resume its model is told what they did. */
  handOff(org: string, id: string, reason: string, by?: string): { status: TaskStatus } {
    const run = this.running(org, id, 'handed to a person', ['running', 'paused']);
    run.handOff(reason, null, by);
    return { status: run.task.status };
  }

  message(org: string, id: string, text: string, by?: string): { status: TaskStatus } {
    const run = this.running(org, id, 'sent a message', ['running', 'paused']);
    run.message(text, by);
    return { status: run.task.status };
  }

  cancel(org: string, id: string, by?: string): { status: TaskStatus } {
    const run = this.running(org, id, 'cancelled', ['running', 'paused']);
    run.abort({ status: 'cancelled', by });
    return { status: 'cancelled' };
  }

  /** The task's events so far, oldest first. */
  events(org: string, id: string): TaskEvent[] {
    this.get(org, id);
    return this.deps.store.events(id);
  }

  /** The newest of the task's events of these types. */
  lastEvent(org: string, id: string, types: readonly string[]): TaskEvent | undefined {
    this.get(org, id);
    return this.deps.store.lastEvent(id, types);
  }

  /**
   * The task's events so far, then each new one until the terminal event (`done` tells whether
   * that already came).
   */
  follow(
    org: string,
    id: string,
    listener: (event: TaskEvent) => void,
  ): { replay: TaskEvent[]; done: boolean; unsubscribe: () => void } {
    const run = this.runs.get(id);
    if (run?.org === org && !run.finished) return { ...run.follow(listener), done: false };
    this.get(org, id);
    return { replay: this.deps.store.events(id), done: true, unsubscribe: () => {} };
  }

  /** Ends every running task as failed (shutdown) and waits for their loops. */
  async close(): Promise<void> {
    for (const run of this.runs.values()) run.abort({ status: 'failed', error: SHUTDOWN });
    await Promise.all(this.loops);
  }

  private running(org: string, id: string, verb: string, allowed: TaskStatus[]): TaskRun {
    const run = this.runs.get(id);
    const task = run?.org === org ? run.task : this.get(org, id);
    if (!run || run.finished || !allowed.includes(task.status)) {
      throw invalidRequest(
        `task ${id} is ${task.status}; only a ${allowed.join(' or ')} task can be ${verb}`,
      );
    }
    return run;
  }

  private async computerFor(org: string, body: StartTaskBody): Promise<ComputerSession> {
    if (body.computer_id) {
      try {
        return this.deps.computers.getRunning(org, body.computer_id);
      } catch (error) {
        throw error instanceof BenchtopError ? error.renamed(() => ['computer_id']) : error;
      }
    }
    const display =
      body.viewport_width || body.viewport_height
        ? { width: body.viewport_width ?? 1280, height: body.viewport_height ?? 720, scale: 1 }
        : undefined;
    return this.deps.computers.create(org, {
      kind: body.kind,
      display,
      persistent: body.persistent,
      environment_id: body.environment_id,
      recording: body.recording,
    } as Parameters<ComputerRegistry['create']>[1]);
  }
}

/** The kind of computer recorded steps ran on, when the registry no longer knows it. */
function kindOf(steps: readonly RecordedStep[]): 'browser' | 'desktop' {
  if (steps.some((step) => step.check?.url)) return 'browser';
  return steps.some((step) => step.check?.region_hash) ? 'desktop' : 'browser';
}

/** Who ended a computer a task made for itself, when the task ended. */
const endedByTask = (task: { task_id: string }) => `its task ${task.task_id}`;
