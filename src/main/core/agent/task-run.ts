import { createHash } from 'node:crypto';
import type {
  CreateResponseBody,
  OutputAction,
  OutputItem,
  ResponseObject,
} from '../../../shared/responses.js';
import {
  EXIT_CODES,
  NOT_RUN_PAUSED,
  TURN_NOT_RUN,
  type Budgets,
  type PausedReason,
  type Task,
  type TaskEvent,
  type TerminalStatus,
} from '../../../shared/tasks.js';
import {
  isPersonInput,
  type ApprovalDecidedEvent,
  type ApprovalRequiredEvent,
} from '../../../shared/events.js';
import type { ActionRunner } from '../actions/action-runner.js';
import type { Settings } from '../config.js';
import type { ActionRequest } from '../computers/action.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { normalizeAction } from '../computers/normalize-action.js';
import type { ComputerAction } from '../../../shared/actions.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { invalidRequest } from '../errors.js';
import { now } from '../ids.js';
import { asStorageError } from '../storage-errors.js';
import type { ResponsesService } from '../models/responses-service.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { TaskStore } from '../store/task-store.js';
import { watchPerson, type PersonLog } from './person-log.js';
import { actionKey, StallDetector } from './stall-detector.js';
import { toComputerAction } from './task-actions.js';
import { lookBefore } from './step-check.js';
import {
  replaySteps,
  repairRequest,
  type RecordedStep,
  type Repair,
  type ReplayHost,
} from './task-replay.js';
import type { UsageLedger } from '../store/usage-ledger.js';
import { raisedBudgets, reachedBudget, stillReachedMessage, TaskMeter } from './task-budgets.js';
import {
  handoffReason,
  REQUEST_HUMAN,
  isRefusal,
  refusalNote,
  RESUMED,
  turnInput,
  turnRequest,
  type OpenCall,
} from './task-turn.js';

/** The flight recorder as a task sees it: it keeps every model call with the computer's recording. */
export type TaskRecorder = {
  taskStarted(computerId: string, taskId: string): void;
  taskEnded(computerId: string): void;
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
  /** The settings as they are now. */
  settings?: () => Settings;
  /** The ledger of model calls, whose rows of a task are its usage and budgets. */
  ledger: Pick<UsageLedger, 'totals'>;
  /** Hears every event of every task (what needs a person goes to the attention queue). */
  onEvent?: (org: string, computerId: string, event: TaskEvent) => void;
};

export type TaskOptions = {
  org: string;
  temperature: number | undefined;
  screenshotMode: 'url' | 'base64';
  /** End the computer with the task (it was created for it and is not persistent). */
  ownsComputer: boolean;
  /** Pause the task when it goes round in circles (StartTaskBody.stall_detection). */
  stallDetection: boolean;
  endComputer: () => Promise<void>;
  /** Repeat these recorded steps instead of asking the model (docs/API.md §18). */
  replay?: { steps: RecordedStep[]; heal: boolean; result: string | null };
};

/** How a task ends. */
export type Outcome =
  | { status: 'completed'; result: string | null }
  | { status: 'failed'; error: string }
  | { status: 'cancelled'; by?: string }
  | { status: 'max_steps' };

type Distribute<T> = T extends unknown ? Omit<T, 'task_id' | 'step' | 'timestamp'> : never;
type EventInput = Distribute<TaskEvent>;

/** A held action of the task: its approval, and the reason the task was paused for before it. */
type PendingApproval = { id: string; before: { reason: PausedReason; by: string | null } | null };
/** A person asked for: by the model's request_human call (answered on resume), or from outside. */
type Handoff = { callId: string | null; watch: { stop(): PersonLog } };
/** How one action of the model went. */
type Performed = { error: null } | { error: string; refused: boolean };

const FAILURES_IN_A_ROW = 3;
const PAUSED_MIDTURN =
  'The task was paused before your remaining actions ran; they were not performed.';
const GAVE_UP = new Set(['failure', 'failed', 'error']);
const ENDINGS = new Set(['terminate', 'answer', 'done']);
/** Thrown to unwind the loop once the task has an outcome from outside (cancel, computer gone). */
class Stopped extends Error {}

/** The PNG of a screenshot the task took, read when needed. */
type Screen = () => Promise<Buffer | undefined>;

/**
 * One agent task: observe (screenshot) → decide (a Responses call) → act (the computer calls),
 * repeated, with pause, resume, injected messages and cancel between the steps. It pauses itself
 * for a person (docs/API.md §14): an approval, a handoff, a stall, a budget.
 */
export class TaskRun {
  private readonly controller = new AbortController();
  private stop: Outcome | undefined;
  private pausedUntil: { promise: Promise<void>; resume: () => void } | undefined;
  private readonly inbox: string[] = [];
  private readonly notes: string[] = [];
  private previousResponse: string | undefined;
  private openCalls: OpenCall[] = [];
  /** Outputs of the model's function calls, given with its next input. */
  private readonly functionOutputs = new Map<string, string>();
  private failures = 0;
  private seq: number;
  private readonly listeners = new Set<(event: TaskEvent) => void>();
  private approval: PendingApproval | undefined;
  /** Whether a person was asked about the action under way (a denial is theirs, not a policy's). */
  private approvalAsked = false;
  private handoff: Handoff | undefined;
  private readonly stalls: StallDetector | undefined;
  /** The model's actions since the last screenshot, for the stall detector. */
  private stepActions: OutputAction[] = [];
  private readonly meter: TaskMeter;
  /** False when the task's end could not be written: only this object knows it. */
  stored = true;

  constructor(
    readonly task: Task,
    private readonly session: ComputerSession,
    private readonly deps: TaskDeps,
    private readonly options: TaskOptions,
  ) {
    this.seq = deps.store.nextSeq(task.task_id);
    if (options.stallDetection) this.stalls = new StallDetector();
    this.meter = new TaskMeter(task.usage, () => deps.ledger.totals(options.org, task.task_id));
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
      if (event.type === 'status' && event.status === 'terminated') {
        this.abort({
          status: 'failed',
          error: `computer ${this.session.id} ended (${event.termination_reason ?? 'terminated'}) while the task was ${this.task.status}`,
        });
      } else if (event.type === 'approval_required' && event.task_id === this.task.task_id) {
        this.approvalRequired(event);
      } else if (event.type === 'approval_decided' && event.task_id === this.task.task_id) {
        this.approvalDecided(event);
      } else if (event.type === 'action_request' && isPersonInput(event)) {
        this.takenOver();
      }
    });
    // In use while the task is on it, the model thinking or a person awaited included.
    const releaseIdle = this.session.holdIdle();
    let outcome: Outcome;
    this.deps.recorder?.taskStarted(this.session.id, this.task.task_id);
    this.meter.start();
    try {
      this.emit({ type: 'started', computer_id: this.session.id, max_steps: this.task.max_steps });
      outcome = await this.loop();
    } catch (error) {
      outcome = this.stop ?? { status: 'failed', error: (error as Error).message };
    }
    unwatch();
    releaseIdle();
    this.deps.recorder?.taskEnded(this.session.id);
    this.finish(outcome);
    if (this.options.ownsComputer) await this.options.endComputer().catch(() => {});
  }

  private async loop(): Promise<Outcome> {
    const { replay } = this.options;
    if (replay) return replaySteps(replay.steps, replay.heal, this.replayHost(), replay.result);
    for (;;) {
      await this.gate();
      if (this.task.steps >= this.task.max_steps) return { status: 'max_steps' };
      if (this.pausedAtBudget()) continue;
      const step = this.task.steps + 1;
      const shot = await this.observe(step);
      if (this.pausedAsStalled(shot.png)) continue;
      const response = await this.decide(step, shot.image);
      this.task.steps = step;
      this.save();
      const outcome = await this.act(step, response.output, shot.screen);
      if (outcome) return outcome;
    }
  }

  // ---- control from outside ------------------------------------------------------------------

  /** `by`: who asked (see TaskEvent's `by`), on the timeline. */
  pause(by?: string): void {
    this.pauseFor('user', by);
  }

  /**
   * Continues a paused task from a fresh screenshot, with `raised` budgets merged in. Refused
   * while an approval is pending or a budget is still used up.
   */
  resume(raised?: Budgets, by?: string): void {
    if (this.approval) {
      throw invalidRequest(
        `task ${this.task.task_id} waits for approval ${this.approval.id}; approve or deny it (POST /approvals/${this.approval.id}/approve or /deny) and it goes on by itself`,
      );
    }
    const budgets = raisedBudgets(this.task.budgets, raised);
    const reached = reachedBudget(budgets, this.meter.used());
    if (reached) {
      throw invalidRequest(stillReachedMessage(this.task.task_id, reached), [
        'budgets',
        reached.budget,
      ]);
    }
    this.task.budgets = budgets;
    this.tellWhatHappenedMeanwhile();
    this.stalls?.reset();
    this.continueRunning(by);
  }

  /** Pauses the task for a person, saying why; `callId`: the model's request_human call. */
  handOff(reason: string, callId: string | null = null, by?: string): void {
    if (this.approval) {
      throw invalidRequest(
        `task ${this.task.task_id} waits for approval ${this.approval.id}; decide it first (POST /approvals/${this.approval.id}/approve or /deny)`,
      );
    }
    if (this.handoff) {
      throw invalidRequest(
        `task ${this.task.task_id} already waits for a person; resume it when done`,
      );
    }
    const watch = watchPerson(this.deps, this.session.id, this.task.task_id);
    this.handoff = { callId, watch };
    this.emit({ type: 'handoff_requested', reason, ...(by !== undefined && { by }) });
    this.pauseFor('handoff');
  }

  message(text: string, by?: string): void {
    this.inbox.push(text);
    this.emit({ type: 'user_message', text, ...(by !== undefined && { by }) });
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

  // ---- pausing for a person ------------------------------------------------------------------

  /** Pauses (or, when paused already, says the new reason): the loop waits at its next gate. */
  private pauseFor(reason: PausedReason, by?: string): void {
    this.task.status = 'paused';
    this.task.paused_reason = reason;
    this.task.paused_by = by ?? null;
    this.meter.stop();
    if (!this.pausedUntil) {
      let resume = () => {};
      const promise = new Promise<void>((resolve) => (resume = resolve));
      this.pausedUntil = { promise, resume };
    }
    this.save();
    this.emit({ type: 'paused', reason, ...(by !== undefined && { by }) });
  }

  private continueRunning(by?: string): void {
    this.task.status = 'running';
    this.task.paused_reason = null;
    this.task.paused_by = null;
    this.meter.start();
    this.save();
    this.emit({ type: 'resumed', ...(by !== undefined && { by }) });
    const paused = this.pausedUntil;
    this.pausedUntil = undefined;
    paused?.resume();
  }

  /**
   * A person acted from the window's live view: a running task stops for them, and a task the
   * window paused for them (it pauses before the person's first action) says why.
   */
  private takenOver(): void {
    if (this.finished) return;
    if (this.task.status === 'running' || this.task.paused_reason === 'user') {
      this.pauseFor('takeover');
    }
  }

  /** The action under way waits for a person's approval: the task waits with it. */
  private approvalRequired(event: ApprovalRequiredEvent): void {
    if (this.finished) return;
    this.approvalAsked = true;
    const { type: _type, timestamp: _at, ...fields } = event;
    this.emit({ type: 'approval_required', ...fields });
    const { status, paused_reason, paused_by } = this.task;
    const before =
      status === 'paused' && paused_reason ? { reason: paused_reason, by: paused_by } : null;
    this.approval = { id: event.approval_id, before };
    this.pauseFor('approval');
  }

  private approvalDecided(event: ApprovalDecidedEvent): void {
    if (this.finished) return;
    const { approval_id, status, note, status_reason } = event;
    this.emit({ type: 'approval_decided', approval_id, status, note, status_reason });
    this.approvalSettled(approval_id);
  }

  /**
   * Goes back to how the task was before the approval was asked, unless something else paused it
   * meanwhile. Called at the decision, and once the held action returned (whichever is first).
   */
  private approvalSettled(id?: string): void {
    const approval = this.approval;
    if (!approval || (id !== undefined && id !== approval.id)) return;
    this.approval = undefined;
    // A task being ended (cancelled, Benchtop stopping) does not go on, nor say it resumed.
    if (this.finished || this.stop || this.task.paused_reason !== 'approval') return;
    if (approval.before) this.pauseFor(approval.before.reason, approval.before.by ?? undefined);
    else this.continueRunning();
  }

  /** Before the model's next call after a pause: what happened meanwhile. */
  private tellWhatHappenedMeanwhile(): void {
    const handoff = this.handoff;
    this.handoff = undefined;
    if (!handoff) {
      this.notes.push(RESUMED);
      return;
    }
    const log = handoff.watch.stop();
    if (handoff.callId) {
      this.functionOutputs.set(
        handoff.callId,
        log.summary('The person you asked for handed the computer back.'),
      );
    } else {
      this.notes.push(
        log.summary(
          'You were paused so that a person could take over; they handed the computer back.',
        ),
      );
    }
  }

  /** Pauses the task when one of its budgets is used up; true when it did. */
  private pausedAtBudget(): boolean {
    const reached = reachedBudget(this.task.budgets, this.meter.used());
    if (!reached) return false;
    this.emit({ type: 'budget_reached', ...reached });
    this.pauseFor('budget');
    return true;
  }

  /** Feeds the stall detector this step's screen; pauses the task on a stall (true then). */
  private pausedAsStalled(png: Buffer | null): boolean {
    if (!this.stalls || !png) return false;
    const screen = createHash('sha256').update(png).digest('hex');
    const stall = this.stalls.observe(screen, actionKey(this.stepActions.splice(0)));
    if (!stall) return false;
    this.emit({ type: 'stalled', ...stall });
    this.pauseFor('stalled');
    return true;
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

  /** The screen now: as the model gets it, and its PNG when the stall detector needs it. */
  private async observe(
    step: number,
  ): Promise<{ image: string; png: Buffer | null; screen: Screen }> {
    const shot = await this.deps.actions.run(this.session, this.request({ type: 'screenshot' }));
    this.checkStopped();
    if (shot.status !== 'success') {
      throw new Error(`could not take a screenshot: ${shot.error_message}`);
    }
    const url = (shot.result as { screenshot_url?: string }).screenshot_url;
    if (!url) throw new Error('could not take a screenshot: no image');
    this.emit({ type: 'screenshot', screenshot_url: url }, step);
    const read = () => this.deps.screenshots.read(this.session.id, url.split('/').pop()!);
    const inline = this.options.screenshotMode === 'base64';
    if (!inline && !this.stalls) return { image: url, png: null, screen: read };
    const png = await read();
    if (!png) throw new Error('the screenshot vanished before the model could see it');
    return {
      image: inline ? `data:image/png;base64,${png.toString('base64')}` : url,
      png,
      screen: () => Promise.resolve(png),
    };
  }

  private async decide(step: number, image: string): Promise<ResponseObject> {
    const body = turnRequest({
      model: this.task.model,
      spec: this.session.spec,
      previousResponse: this.previousResponse,
      input: turnInput({
        image,
        instruction: this.previousResponse ? null : this.task.instruction,
        openCalls: this.openCalls,
        outputs: this.functionOutputs,
        notes: [...this.notes.splice(0), ...this.inbox.splice(0)],
      }),
      temperature: this.options.temperature,
    });
    this.functionOutputs.clear();
    const response = await this.callModel(step, body);
    this.previousResponse = response.id;
    if (response.status !== 'completed') {
      throw new Error(
        `the model did not answer step ${step}: ${response.error?.message ?? response.status}`,
      );
    }
    return response;
  }

  /**
   * One model call of this task: recorded, counted against its budget, and cancelled through the
   * task's signal when the task is ended from outside.
   */
  private async callModel(step: number, body: CreateResponseBody): Promise<ResponseObject> {
    const started = await this.deps.responses.create(this.org, body, {
      computerId: this.session.id,
      signal: this.controller.signal,
      taskId: this.task.task_id,
      // A rate limit's wait shows on the timeline, or the task would look stuck.
      onRetry: (retry) => void this.tryEmit({ type: 'model_retry', ...retry }, step),
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
    this.meter.refresh();
    this.checkStopped();
    return response;
  }

  /**
   * Reports what the model said and performs its calls; an outcome when the task is over.
   * `screen`: the PNG of the screenshot the model saw, which its first action is checked on.
   */
  private async act(
    step: number,
    output: OutputItem[],
    screen: Screen,
  ): Promise<Outcome | undefined> {
    const said = this.report(step, output);
    this.openCalls = output.flatMap((item): OpenCall[] => {
      if (item.type === 'computer_call') return [{ id: item.call_id, kind: 'computer' }];
      if (item.type === 'function_call') {
        return [{ id: item.call_id, kind: 'function', name: item.name }];
      }
      return [];
    });
    if (this.openCalls.length === 0) return { status: 'completed', result: said };
    const actions = output.flatMap((item) => (item.type === 'computer_call' ? [item.action] : []));
    for (const [index, action] of actions.entries()) {
      const last = index === actions.length - 1;
      const next = await this.actOne(step, action, said, last, index === 0 ? screen : undefined);
      if (next === 'paused-before' || next === 'paused-after') {
        // What the model asked for and a person's pause kept from running, on the timeline.
        const from = next === 'paused-before' ? index : index + 1;
        this.notes.push(from === 0 ? TURN_NOT_RUN : PAUSED_MIDTURN);
        if (!this.controller.signal.aborted) this.notRun(step, actions.slice(from));
        return undefined;
      }
      if (next === 'skip') return undefined;
      if (next !== 'next') return next;
    }
    const asked = output.find(
      (item) => item.type === 'function_call' && item.name === REQUEST_HUMAN.name,
    );
    if (asked?.type === 'function_call' && !this.controller.signal.aborted) {
      this.handOffFromModel(asked.call_id, handoffReason(asked.arguments));
    }
    return undefined;
  }

  /** The model's reasoning and messages as events; what it said last. */
  private report(step: number, output: OutputItem[]): string | null {
    let said: string | null = null;
    for (const item of output) {
      if (item.type === 'reasoning') {
        this.emit({ type: 'reasoning', text: item.summary.map((s) => s.text).join('\n') }, step);
      } else if (item.type === 'message') {
        said = item.content.map((part) => part.text).join('');
        this.emit({ type: 'message', text: said }, step);
      }
    }
    return said;
  }

  /**
   * One action of the model's turn (`last` of it or not): 'next' to go on with the turn, 'skip' to
   * leave the rest of it for the next step, or the task's outcome. `screen`: for the turn's first
   * action, the screenshot the model decided on.
   */
  private async actOne(
    step: number,
    action: OutputAction,
    said: string | null,
    last: boolean,
    screen: Screen | undefined,
  ): Promise<Outcome | 'next' | 'skip' | 'paused-before' | 'paused-after'> {
    if (action.type === 'terminate' || action.type === 'answer' || action.type === 'done') {
      this.emit({ type: 'action', action }, step);
      const result = action.result ?? action.text ?? said;
      if (action.status && GAVE_UP.has(action.status)) {
        return { status: 'failed', error: `the model gave up: ${result ?? action.status}` };
      }
      return { status: 'completed', result };
    }
    if (this.pausedUntil || this.controller.signal.aborted) return 'paused-before';
    // The first action of a turn is checked against the screen the model saw (no second shot).
    const seen = screen && (await screen().catch(() => undefined));
    const check = await lookBefore(this.session, action, { screen: seen }).catch(() => undefined);
    this.emit({ type: 'action', action, ...(check && { check }) }, step);
    this.stepActions.push(action);
    const done = await this.perform(action);
    this.emit(
      {
        type: 'action_result',
        status: done.error ? 'error' : 'success',
        error_message: done.error,
      },
      step,
    );
    if (done.error === null) {
      this.failures = 0;
      // Decided as the action ends: a pause that came while it ran drops the rest of the turn.
      if (last || !(this.pausedUntil || this.controller.signal.aborted)) return 'next';
      return 'paused-after';
    }
    // A refusal is a person's or a policy's decision, not the model failing.
    if (done.refused) {
      this.notes.push(refusalNote(action.type, done.error, this.approvalAsked));
      return 'skip';
    }
    this.failures++;
    if (this.failures >= FAILURES_IN_A_ROW) {
      return {
        status: 'failed',
        error: `${FAILURES_IN_A_ROW} actions in a row failed; the last: ${done.error}`,
      };
    }
    this.notes.push(
      `Your ${action.type} action failed: ${done.error}. The remaining actions of that turn were skipped.`,
    );
    return 'skip';
  }

  /** Actions of the turn a pause kept from running: each on the timeline, as not performed. */
  private notRun(step: number, actions: OutputAction[]): void {
    for (const action of actions) {
      this.emit({ type: 'action', action }, step);
      this.emit({ type: 'action_result', status: 'error', error_message: NOT_RUN_PAUSED }, step);
    }
  }

  /** Runs one action on the computer (it may wait for an approval); how it went. */
  private async perform(action: OutputAction): Promise<Performed> {
    const parsed = toComputerAction(action);
    if ('error' in parsed) return { error: parsed.error, refused: false };
    this.approvalAsked = false;
    try {
      const result = await this.deps.actions.run(this.session, this.request(parsed.action));
      this.approvalSettled();
      if (result.status === 'success') return { error: null };
      // An action cut short by the task's end is no failure of the model's.
      this.checkStopped();
      return { error: result.error_message, refused: isRefusal(result.error_message) };
    } catch (error) {
      this.approvalSettled();
      this.checkStopped();
      return { error: (error as Error).message, refused: false };
    }
  }

  // ---- replaying a recorded task ------------------------------------------------------------

  /** The replay's view of this task: the same gate, actions and model as a model-driven run. */
  private replayHost(): ReplayHost {
    return {
      gate: () => this.gate(),
      begin: (step) => {
        this.task.steps = step;
        this.save();
      },
      look: (action, pixels) => lookBefore(this.session, action, { pixels }),
      perform: async (step, action, check) => {
        this.emit({ type: 'action', action, check }, step);
        const done = await this.perform(action);
        this.emit(
          {
            type: 'action_result',
            status: done.error ? 'error' : 'success',
            error_message: done.error,
          },
          step,
        );
        return done.error;
      },
      repair: (step, recorded, reason) => this.repair(step, recorded, reason),
      healed: (step, event) => this.emit({ type: 'healed', ...event }, step),
    };
  }

  /** One model call on the screen as it is now, for the action that does what `recorded` did. */
  private async repair(step: number, recorded: RecordedStep, reason: string): Promise<Repair> {
    const shot = await this.observe(step);
    const body = repairRequest({
      model: this.task.model,
      spec: this.session.spec,
      instruction: this.task.instruction,
      step: recorded,
      reason,
      image: shot.image,
    });
    const response = await this.callModel(step, body);
    if (response.status !== 'completed') {
      return { error: `the model did not answer: ${response.error?.message ?? response.status}` };
    }
    this.report(step, response.output);
    const call = response.output.find((item) => item.type === 'computer_call');
    if (call?.type !== 'computer_call' || ENDINGS.has(call.action.type)) {
      return { error: 'the model answered with no action' };
    }
    const parsed = toComputerAction(call.action);
    if ('error' in parsed) return { error: parsed.error };
    const url = shot.image.startsWith('data:') ? null : shot.image;
    return { action: call.action, screenshot_url: url };
  }

  /** The model called request_human: after the actions of its turn, the task waits for a person. */
  private handOffFromModel(callId: string, reason: string): void {
    if (this.handoff || this.approval) {
      this.functionOutputs.set(
        callId,
        'A person was already asked for; they handed the computer back.',
      );
      return;
    }
    this.handOff(reason, callId);
  }

  // ---- bookkeeping ---------------------------------------------------------------------------

  /**
   * Records the outcome. It stands in memory (GET answers it, followers get the last event) even
   * when the disk refuses it; a restart then reads the task as ended by shutdown.
   */
  private finish(outcome: Outcome): void {
    const status: TerminalStatus = outcome.status;
    this.handoff?.watch.stop();
    this.handoff = undefined;
    this.approval = undefined;
    this.meter.stop();
    this.task.status = status;
    this.task.paused_reason = null;
    this.task.paused_by = null;
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
          : outcome.status === 'cancelled' && outcome.by !== undefined
            ? { type: 'cancelled', by: outcome.by }
            : { type: outcome.status },
    );
    this.listeners.clear();
  }

  /** An action as the runner takes it, ended with the task (a wait, a navigation in flight). */
  private request(action: ComputerAction): ActionRequest {
    return {
      ...normalizeAction(action),
      signal: this.controller.signal,
      taskId: this.task.task_id,
    };
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
