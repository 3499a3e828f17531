import type {
  CreateResponseBody,
  InputItem,
  OutputAction,
  OutputItem,
  ResponseObject,
} from '../../../shared/responses.js';
import {
  EXIT_CODES,
  type Task,
  type TaskEvent,
  type TerminalStatus,
} from '../../../shared/tasks.js';
import type { ActionRunner } from '../actions/action-runner.js';
import type { Settings } from '../config.js';
import type { ActionRequest } from '../computers/action.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { normalizeAction } from '../computers/normalize-action.js';
import type { ComputerAction } from '../../../shared/actions.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { now } from '../ids.js';
import { asStorageError } from '../storage-errors.js';
import type { ResponsesService } from '../models/responses-service.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { TaskStore } from '../store/task-store.js';
import { toComputerAction } from './task-actions.js';

/** The flight recorder as a task sees it: it keeps every model call with the computer's recording. */
export type TaskRecorder = {
  taskStarted(computerId: string, taskId: string): void;
  modelCall(call: {
    computerId: string;
    taskId: string;
    step: number;
    request: CreateResponseBody;
    response: ResponseObject;
  }): Promise<void>;
};

export type { ActionObserver, ObservedAction } from '../approvals/approval-service.js';
import type { ActionObserver } from '../approvals/approval-service.js';

export type TaskDeps = {
  store: TaskStore;
  responses: ResponsesService;
  actions: ActionRunner;
  events: ComputerEvents;
  screenshots: ScreenshotStore;
  recorder?: TaskRecorder;
  /** Sees each action on the task's computer with its target (what a person did in a handoff). */
  observe?: ActionObserver;
  /** The settings as they are now (model prices for usage.cost_usd). */
  settings?: () => Settings;
  /** Hears every event of every task (what needs a person goes to the attention queue). */
  onEvent?: (org: string, computerId: string, event: TaskEvent) => void;
};

export type TaskOptions = {
  org: string;
  temperature: number | undefined;
  screenshotMode: 'url' | 'base64';
  /** End the computer with the task (it was created for it and is not persistent). */
  ownsComputer: boolean;
  endComputer: () => Promise<void>;
};

/** How a task ends. */
export type Outcome =
  | { status: 'completed'; result: string | null }
  | { status: 'failed'; error: string }
  | { status: 'cancelled' | 'max_steps' };

type Distribute<T> = T extends unknown ? Omit<T, 'task_id' | 'step' | 'timestamp'> : never;
type EventInput = Distribute<TaskEvent>;
type OpenCall = { id: string; kind: 'computer' | 'function' };

const FAILURES_IN_A_ROW = 3;
const GAVE_UP = new Set(['failure', 'failed', 'error']);
const INSTRUCTIONS =
  'You operate a computer for the user through the computer tool, one step at a time, looking at ' +
  'each new screenshot. When the task is done, stop calling the tool and answer with the result.';
const RESUMED =
  'The user paused you and may have changed things on the computer. Continue from this screenshot.';

/** Thrown to unwind the loop once the task has an outcome from outside (cancel, computer gone). */
class Stopped extends Error {}

/**
 * One agent task: observe (screenshot) → decide (a Responses call) → act (the computer calls),
 * repeated, with pause, resume, injected messages and cancel between the steps.
 */
export class TaskRun {
  private readonly controller = new AbortController();
  private stop: Outcome | undefined;
  private pausedUntil: { promise: Promise<void>; resume: () => void } | undefined;
  private readonly inbox: string[] = [];
  private readonly notes: string[] = [];
  private previousResponse: string | undefined;
  private openCalls: OpenCall[] = [];
  private failures = 0;
  private seq: number;
  private readonly listeners = new Set<(event: TaskEvent) => void>();
  /** False when the task's end could not be written: only this object knows it. */
  stored = true;

  constructor(
    readonly task: Task,
    private readonly session: ComputerSession,
    private readonly deps: TaskDeps,
    private readonly options: TaskOptions,
  ) {
    this.seq = deps.store.nextSeq(task.task_id);
  }

  get org(): string {
    return this.options.org;
  }

  get finished(): boolean {
    return this.task.exit_code !== null;
  }

  /** Runs the loop to its end; never rejects. */
  async run(): Promise<void> {
    const unwatch = this.deps.events.subscribe(this.session.id, (event) => {
      if (event.type !== 'status' || event.status !== 'terminated') return;
      this.abort({
        status: 'failed',
        error: `computer ${this.session.id} ended (${event.termination_reason ?? 'terminated'}) while the task was running`,
      });
    });
    let outcome: Outcome;
    this.deps.recorder?.taskStarted(this.session.id, this.task.task_id);
    try {
      this.emit({ type: 'started', computer_id: this.session.id, max_steps: this.task.max_steps });
      outcome = await this.loop();
    } catch (error) {
      outcome = this.stop ?? { status: 'failed', error: (error as Error).message };
    }
    unwatch();
    this.finish(outcome);
    if (this.options.ownsComputer) await this.options.endComputer().catch(() => {});
  }

  private async loop(): Promise<Outcome> {
    for (;;) {
      await this.gate();
      if (this.task.steps >= this.task.max_steps) return { status: 'max_steps' };
      const step = this.task.steps + 1;
      const image = await this.observe(step);
      const response = await this.decide(step, image);
      this.task.steps = step;
      this.save();
      const outcome = await this.act(step, response.output);
      if (outcome) return outcome;
    }
  }

  // ---- control from outside ------------------------------------------------------------------

  pause(): void {
    this.task.status = 'paused';
    let resume = () => {};
    const promise = new Promise<void>((resolve) => (resume = resolve));
    this.pausedUntil = { promise, resume };
    this.save();
    this.emit({ type: 'paused' });
  }

  resume(): void {
    this.task.status = 'running';
    this.notes.push(RESUMED);
    this.save();
    this.emit({ type: 'resumed' });
    const paused = this.pausedUntil;
    this.pausedUntil = undefined;
    paused?.resume();
  }

  message(text: string): void {
    this.inbox.push(text);
    this.emit({ type: 'user_message', text });
  }

  /** Ends the task from outside: the step in flight is abandoned (an action already sent finishes). */
  abort(outcome: Outcome): void {
    if (this.stop || this.finished) return;
    this.stop = outcome;
    this.controller.abort(new Stopped(outcome.status));
    this.pausedUntil?.resume();
  }

  /** Every event so far (from the store) and then each new one, until the terminal event. */
  follow(listener: (event: TaskEvent) => void): { replay: TaskEvent[]; unsubscribe: () => void } {
    const replay = this.deps.store.events(this.task.task_id);
    this.listeners.add(listener);
    return { replay, unsubscribe: () => this.listeners.delete(listener) };
  }

  // ---- the step functions --------------------------------------------------------------------

  /** Waits while paused; stops when the task was ended from outside. */
  private async gate(): Promise<void> {
    this.checkStopped();
    while (this.pausedUntil) {
      await this.pausedUntil.promise;
      this.checkStopped();
    }
  }

  private async observe(step: number): Promise<string> {
    const shot = await this.deps.actions.run(this.session, this.request({ type: 'screenshot' }));
    this.checkStopped();
    if (shot.status !== 'success') {
      throw new Error(`could not take a screenshot: ${shot.error_message}`);
    }
    const url = (shot.result as { screenshot_url?: string }).screenshot_url;
    if (!url) throw new Error('could not take a screenshot: no image');
    this.emit({ type: 'screenshot', screenshot_url: url }, step);
    if (this.options.screenshotMode === 'url') return url;
    const png = await this.deps.screenshots.read(this.session.id, url.split('/').pop()!);
    if (!png) throw new Error('the screenshot vanished before the model could see it');
    return `data:image/png;base64,${png.toString('base64')}`;
  }

  private async decide(step: number, image: string): Promise<ResponseObject> {
    const { display, kind } = this.session.spec;
    const body = {
      model: this.task.model,
      instructions: INSTRUCTIONS,
      tools: [
        {
          type: 'computer_use',
          display_width: display.width,
          display_height: display.height,
          environment: kind === 'browser' ? 'browser' : 'linux',
        },
      ],
      previous_response_id: this.previousResponse,
      input: this.input(image),
      temperature: this.options.temperature,
    } as CreateResponseBody;
    // The task's signal cancels the response when the task is ended from outside.
    const started = await this.deps.responses.create(this.org, body, {
      computerId: this.session.id,
      signal: this.controller.signal,
    });
    const response = await started.finished;
    void this.deps.recorder
      ?.modelCall({
        computerId: this.session.id,
        taskId: this.task.task_id,
        step,
        request: body,
        response,
      })
      .catch(() => {});
    this.checkStopped();
    this.previousResponse = response.id;
    if (response.status !== 'completed') {
      throw new Error(
        `the model did not answer step ${step}: ${response.error?.message ?? response.status}`,
      );
    }
    return response;
  }

  /** This step's input: the screenshot answering every open call, then anything to tell the model. */
  private input(image: string): InputItem[] {
    const screenshot = { type: 'computer_screenshot' as const, image_url: image };
    const items: InputItem[] = this.previousResponse
      ? this.openCalls.map((call) =>
          call.kind === 'computer'
            ? { type: 'computer_call_output', call_id: call.id, output: screenshot }
            : {
                type: 'function_call_output',
                call_id: call.id,
                output: 'functions are not available in agent tasks; use the computer tool',
              },
        )
      : [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: this.task.instruction },
              { type: 'input_image', image_url: image },
            ],
          },
        ];
    if (this.previousResponse && !this.openCalls.some((call) => call.kind === 'computer')) {
      items.push({ role: 'user', content: [{ type: 'input_image', image_url: image }] });
    }
    for (const text of [...this.notes.splice(0), ...this.inbox.splice(0)]) {
      items.push({ role: 'user', content: text });
    }
    return items;
  }

  /** Reports what the model said and performs its calls; an outcome when the task is over. */
  private async act(step: number, output: OutputItem[]): Promise<Outcome | undefined> {
    let said: string | null = null;
    for (const item of output) {
      if (item.type === 'reasoning') {
        this.emit({ type: 'reasoning', text: item.summary.map((s) => s.text).join('\n') }, step);
      } else if (item.type === 'message') {
        said = item.content.map((part) => part.text).join('');
        this.emit({ type: 'message', text: said }, step);
      }
    }
    this.openCalls = output.flatMap((item): OpenCall[] => {
      if (item.type === 'computer_call') return [{ id: item.call_id, kind: 'computer' }];
      if (item.type === 'function_call') return [{ id: item.call_id, kind: 'function' }];
      return [];
    });
    const calls = output.flatMap((item) => (item.type === 'computer_call' ? [item] : []));
    if (this.openCalls.length === 0) return { status: 'completed', result: said };
    for (const call of calls) {
      const { action } = call;
      if (action.type === 'terminate' || action.type === 'answer' || action.type === 'done') {
        this.emit({ type: 'action', action }, step);
        const result = action.result ?? action.text ?? said;
        if (action.status && GAVE_UP.has(action.status)) {
          return { status: 'failed', error: `the model gave up: ${result ?? action.status}` };
        }
        return { status: 'completed', result };
      }
      if (this.pausedUntil || this.controller.signal.aborted) {
        this.notes.push(
          'The task was paused before your remaining actions ran; they were not performed.',
        );
        return undefined;
      }
      this.emit({ type: 'action', action }, step);
      const error = await this.perform(action);
      this.emit(
        { type: 'action_result', status: error ? 'error' : 'success', error_message: error },
        step,
      );
      if (!error) {
        this.failures = 0;
        continue;
      }
      this.failures++;
      if (this.failures >= FAILURES_IN_A_ROW) {
        return {
          status: 'failed',
          error: `${FAILURES_IN_A_ROW} actions in a row failed; the last: ${error}`,
        };
      }
      this.notes.push(
        `Your ${action.type} action failed: ${error}. The remaining actions of that turn were skipped.`,
      );
      return undefined;
    }
    return undefined;
  }

  /** Runs one action on the computer; the error message when it failed, else null. */
  private async perform(action: OutputAction): Promise<string | null> {
    const parsed = toComputerAction(action);
    if ('error' in parsed) return parsed.error;
    try {
      const result = await this.deps.actions.run(this.session, this.request(parsed.action));
      if (result.status === 'success') return null;
      // An action cut short by the task's end is no failure of the model's.
      this.checkStopped();
      return result.error_message;
    } catch (error) {
      this.checkStopped();
      return (error as Error).message;
    }
  }

  // ---- bookkeeping ---------------------------------------------------------------------------

  /**
   * Records the outcome. It stands in memory (GET answers it, followers get the last event) even
   * when the disk refuses it; a restart then reads the task as ended by shutdown.
   */
  private finish(outcome: Outcome): void {
    const status: TerminalStatus = outcome.status;
    this.task.status = status;
    this.task.exit_code = EXIT_CODES[status];
    if (outcome.status === 'completed') this.task.result = outcome.result;
    if (outcome.status === 'failed') this.task.error = outcome.error;
    try {
      this.save();
    } catch {
      this.stored = false;
    }
    this.tryEmit(
      outcome.status === 'completed'
        ? { type: 'completed', result: outcome.result }
        : outcome.status === 'failed'
          ? { type: 'failed', error: outcome.error }
          : { type: outcome.status },
    );
    this.listeners.clear();
  }

  /** An action as the runner takes it, ended with the task (a wait, a navigation in flight). */
  private request(action: ComputerAction): ActionRequest {
    return { ...normalizeAction(action), signal: this.controller.signal };
  }

  private checkStopped(): void {
    if (this.controller.signal.aborted) throw new Stopped('stopped');
  }

  /** Writes the task; a disk that refuses fails the step (and so the task) saying why. */
  private save(): void {
    this.task.updated_at = now();
    try {
      this.deps.store.update(this.task);
    } catch (error) {
      throw asStorageError('store the task', error);
    }
  }

  private emit(input: EventInput, step = this.task.steps): void {
    const failure = this.tryEmit(input, step);
    if (failure) throw asStorageError('store the task', failure);
  }

  /** Stores and publishes an event; the error when it could not be stored (followers still get it). */
  private tryEmit(input: EventInput, step = this.task.steps): Error | undefined {
    const event = { ...input, task_id: this.task.task_id, step, timestamp: now() } as TaskEvent;
    let failure: Error | undefined;
    try {
      this.deps.store.append(this.task.task_id, this.seq++, event);
    } catch (error) {
      failure = error as Error;
    }
    for (const listener of this.listeners) listener(event);
    this.deps.onEvent?.(this.org, this.session.id, event);
    return failure;
  }
}
