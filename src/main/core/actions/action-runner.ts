import { setTimeout as sleep } from 'node:timers/promises';
import type { ActionResult, BatchResult } from '../../../shared/actions.js';
import type { ActionOutcome, ActionRequest } from '../computers/action.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { isTabbed, performs, type Operator } from '../computers/operator.js';
import { ActionFailure, BenchtopError, invalidRequest, notFound } from '../errors.js';
import type { ComputerEventInput, ComputerEvents } from '../events/computer-events.js';
import { now } from '../ids.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import { truncateText } from '../shell/command-run.js';
import { commandKey, RecentRuns } from '../shell/recent-commands.js';
import { stoppedBecause } from '../computers/abortable.js';
import type { ShellService } from '../shell/shell-service.js';
import { mayHoldValues, redactValues } from '../secrets/redact.js';
import type { SecretVault } from '../secrets/secret-vault.js';
import {
  Hold,
  untilDecided,
  type ApprovalService,
  type Decision,
} from '../approvals/approval-service.js';

/** The approval gate as the runner uses it (docs/API.md §14). */
export type Gate = Pick<ApprovalService, 'check' | 'wait'>;

/** The vault as the runner uses it (docs/API.md §15): placeholders are resolved last. */
export type Secrets = Pick<SecretVault, 'unknown' | 'resolve' | 'allValues'>;

/**
 * What becomes of an action the computer cannot take (bad input for it, a computer that ended):
 * thrown, so a single-action request answers with its status, or reported as the action's error
 * result, as a batch does.
 */
type InvalidAction = 'throw' | 'report';

/** Actions whose result always carries page_context (when they ran in a tab). */
const ALWAYS_CONTEXT = new Set(['navigate', 'new_tab', 'switch_tab', 'close_tab', 'list_tabs']);

export type RunnerDeps = {
  screenshots: ScreenshotStore;
  baseUrl: () => string;
  shell: ShellService;
  /** Every action is published as action_request, then action_response. */
  events: ComputerEvents;
  /** Policies checked before each action runs; without it every action runs. */
  gate?: Gate;
  /** `{{secret:NAME}}` in typed text; without it the text is typed as it is. */
  secrets?: Secrets;
};

/**
 * Runs actions on a computer, one at a time, and shapes ActionResults. Failures of the action
 * itself become `status: "error"`; a BenchtopError (bad input for this computer) propagates so
 * the single-action endpoints can answer with its status.
 */
export class ActionRunner {
  private readonly batches = new RecentRuns<BatchRun>((run) => ({
    chars: run.retainedChars,
    idle: !run.running,
  }));

  constructor(private readonly deps: RunnerDeps) {}

  /**
   * Runs the action in the computer's queue. One a policy holds for a person waits outside the
   * queue (other actions, a person's among them, go on meanwhile) and is checked again when
   * approved, right before it runs.
   */
  async run(session: ComputerSession, request: ActionRequest): Promise<ActionResult> {
    const outcome = await untilDecided(
      (hold, signal) => this.deps.gate!.wait(hold, signal),
      request.signal,
      (admitted) =>
        session.serialize(() => this.runGated(session, request, 'throw', undefined, admitted)),
    );
    return 'done' in outcome ? outcome.done : this.refused(session, request, outcome.stopped);
  }

  /**
   * Runs in order and stops at the first failure; nothing else runs on the computer meanwhile.
   * Only while its request waits: once `from.signal` aborts, no further action starts and the
   * answer is undefined. A retry of the request (`from.retried`, same body) joins the batch
   * instead of running it again, and carries it on from where it stopped if it had.
   */
  batch(
    session: ComputerSession,
    requests: ActionRequest[],
    from: BatchRequest,
  ): Promise<BatchResult | undefined> {
    const key = commandKey(session.id, 'batch', from.body);
    const earlier = from.retried ? this.batches.find(key) : undefined;
    if (earlier) return earlier.then((run) => run.follow(from.signal));
    const run = new BatchRun(requests, {
      serialize: (work) => session.serialize(work),
      step: (request, stop, admitted) => this.runGated(session, request, 'report', stop, admitted),
      wait: (hold, signal) => this.deps.gate!.wait(hold, signal),
      refused: (request, decision) => this.refused(session, request, decision),
      onIdle: () => this.batches.trim(),
    });
    this.batches.remember(key, Promise.resolve(run));
    return run.follow(from.signal);
  }

  /** The gate's verdict first: a hold to wait for, a refusal, or the action run. */
  private async runGated(
    session: ComputerSession,
    request: ActionRequest,
    invalid: InvalidAction,
    stop: AbortSignal | undefined,
    admitted: Hold | undefined,
  ): Promise<ActionResult | Hold> {
    // An unknown secret is bad input: answered before a person is asked about the action.
    const { action } = request;
    const unknown =
      action.type === 'type' || action.type === 'point_and_type'
        ? this.deps.secrets?.unknown(session.org, action.text, 'text')
        : undefined;
    if (unknown) {
      if (invalid === 'throw') throw unknown;
      return this.refused(session, request, { status: 'denied', message: unknown.message });
    }
    const { gate } = this.deps;
    if (gate && session.status === 'running' && request.action.type !== 'finish') {
      const verdict = await gate.check(
        {
          session,
          action: request.action,
          tabId: request.tabId,
          taskId: request.taskId,
          source: request.source,
          requester: request.requester,
          retried: request.retried,
        },
        admitted,
      );
      if (verdict.kind === 'held') return verdict.hold;
      if (verdict.kind === 'refuse') {
        return this.refused(session, request, { status: 'denied', message: verdict.message });
      }
    }
    return this.runReported(session, request, invalid, stop);
  }

  /**
   * The answer for an action that did not run: denied, its approval expired, or its request left
   * while it was held. On the events stream as requested and answered with the error.
   */
  private refused(
    session: ComputerSession,
    request: ActionRequest,
    decision: Exclude<Decision, { status: 'approved' }>,
  ): ActionResult {
    const result = errorResult(
      request,
      decision.status === 'abandoned'
        ? notStarted(
            request,
            request.signal ? stoppedBecause(request.signal) : 'its request was closed',
          )
        : decision.message,
    );
    this.deps.events.publish(session.id, requestEvent(request));
    this.deps.events.publish(session.id, responseEvent(result));
    return result;
  }

  /** Runs one action between its action_request and action_response events. */
  private async runReported(
    session: ComputerSession,
    request: ActionRequest,
    invalid: InvalidAction,
    stop?: AbortSignal,
  ): Promise<ActionResult> {
    // Whoever asked stopped waiting while the action was queued behind others: it never starts.
    if (request.signal?.aborted) {
      return errorResult(request, notStarted(request, stoppedBecause(request.signal)));
    }
    const publish = (event: ComputerEventInput) => this.deps.events.publish(session.id, event);
    publish(requestEvent(request));
    try {
      const result = await this.runNow(session, request, invalid, stop);
      publish(responseEvent(result));
      return result;
    } catch (error) {
      publish({
        type: 'action_response',
        request_id: request.requestId,
        status: 'error',
        error_message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  private async runNow(
    session: ComputerSession,
    request: ActionRequest,
    invalid: InvalidAction,
    stop?: AbortSignal,
  ): Promise<ActionResult> {
    if (session.status !== 'running') {
      const error = notFound(`computer ${session.id} has ended (${session.terminationReason})`);
      if (invalid === 'throw') throw error;
      return errorResult(request, error.message);
    }
    session.touch();
    try {
      const outcome = await this.execute(session, request, stop);
      const pageContext = await this.contextFor(session, request, outcome.executedTabId);
      return this.withoutSecrets({
        request_id: request.requestId,
        status: 'success',
        result: outcome.result,
        ...(outcome.executedTabId && { executed_tab_id: outcome.executedTabId }),
        ...(pageContext && { page_context: pageContext }),
        timestamp: now(),
      });
    } catch (error) {
      if (error instanceof BenchtopError && invalid === 'throw') throw error;
      const message = error instanceof Error ? error.message : String(error);
      return errorResult(
        request,
        session.status === 'running'
          ? message
          : `computer ${session.id} ended during the action (${session.terminationReason})`,
      );
    } finally {
      session.touch();
    }
  }

  private async contextFor(
    session: ComputerSession,
    request: ActionRequest,
    tabId: string | undefined,
  ) {
    if (!request.includeContext && !ALWAYS_CONTEXT.has(request.action.type)) return undefined;
    const { operator } = session;
    if (!isTabbed(operator)) return undefined;
    return operator
      .pageContext({ executed: tabId, requested: request.tabId })
      .catch(() => undefined);
  }

  /**
   * `request.signal` cuts a wait or a navigation short (whoever asked stopped waiting); `stop`
   * cuts a wait short (a batch whose request closed). Other actions run to their end.
   */
  private async execute(
    session: ComputerSession,
    request: ActionRequest,
    stop?: AbortSignal,
  ): Promise<ActionOutcome> {
    const { action } = request;
    const { operator } = session;
    switch (action.type) {
      case 'wait': {
        const ended = session.ended.signal;
        const signals = [ended, stop, request.signal].filter((signal) => signal !== undefined);
        await sleep(action.ms, undefined, { signal: AbortSignal.any(signals) }).catch(() => {
          throw new ActionFailure(
            ended.aborted
              ? 'the computer ended during the wait'
              : stop?.aborted
                ? 'the wait was cut short: the request of its batch was closed (a retry of the request carries the batch on)'
                : `the wait was cut short: ${stoppedBecause(request.signal!)}`,
          );
        });
        return { result: {}, executedTabId: mainTab(operator) };
      }
      case 'screenshot':
        return this.screenshot(session, request);
      case 'point_and_type': {
        const click = { type: 'click', at: action.at, button: 'left', count: 1 } as const;
        await this.perform(session, { ...request, action: click });
        return this.perform(session, { ...request, action: { type: 'type', text: action.text } });
      }
      case 'debug':
        return { result: await this.debug(session, request), executedTabId: mainTab(operator) };
      case 'finish': {
        const { status, result } = action;
        return {
          result: {
            ...(status !== undefined && { status }),
            ...(result !== undefined && { result }),
          },
          executedTabId: mainTab(operator),
        };
      }
      default:
        return this.perform(session, request);
    }
  }

  /** An action of the operator's own, if its kind performs it. */
  private perform(session: ComputerSession, request: ActionRequest): Promise<ActionOutcome> {
    const { operator } = session;
    const { action } = request;
    if (!performs(operator, request)) throw unsupported(action.type, operator.kind);
    const { secrets } = this.deps;
    if (action.type === 'type' && secrets) {
      // The value exists from here to the keystrokes only: events and answers keep the placeholder.
      const text = secrets.resolve(session.org, action.text, 'text');
      if (text !== action.text)
        return operator.perform({ ...request, action: { ...action, text } });
    }
    return operator.perform(request);
  }

  /**
   * An answer with the vault's values taken out: a page may show what was typed into it (its
   * HTML, its title), and a value must never be answered. Only an answer that may hold one is
   * written as JSON to take it out.
   */
  private withoutSecrets(result: ActionResult): ActionResult {
    const values = this.deps.secrets?.allValues() ?? [];
    if (values.length === 0 || !mayHoldValues(result, values)) return result;
    const json = JSON.stringify(result);
    const redacted = redactValues(json, values);
    return redacted === json ? result : (JSON.parse(redacted) as ActionResult);
  }

  private async screenshot(
    session: ComputerSession,
    request: ActionRequest,
  ): Promise<ActionOutcome> {
    const shot = await session.operator.screenshot(request.tabId);
    const size = { width: shot.width, height: shot.height };
    if (request.action.type === 'screenshot' && request.action.base64) {
      const base64 = shot.png.toString('base64');
      return {
        result: { screenshot_url: `data:image/png;base64,${base64}`, ...size, base64 },
        executedTabId: shot.tabId,
      };
    }
    const path = await this.deps.screenshots.save(session.id, shot.png);
    return {
      result: { screenshot_url: `${this.deps.baseUrl()}${path}`, ...size },
      executedTabId: shot.tabId,
    };
  }

  private async debug(
    session: ComputerSession,
    request: ActionRequest,
  ): Promise<Record<string, unknown>> {
    if (request.action.type !== 'debug') throw new Error('not a debug action');
    const spec = request.action.command;
    const run = await this.deps.shell
      .start(session, 'debug', spec, {
        requestId: request.requestId,
        retried: request.retried ?? false,
      })
      .catch((error: unknown) => {
        throw error instanceof BenchtopError ? error.at(['debug']) : error;
      });
    const outcome = await run.outcome();
    return {
      debug_response: truncateText(outcome.stdout + outcome.stderr, spec.max_output_length),
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      exit_code: outcome.exitCode,
    };
  }
}

/** The request a batch runs for: its body (a retry's is the same), and when it is closed. */
export type BatchRequest = {
  body: unknown;
  /** The SDK re-sent the request (x-stainless-retry-count above 0). */
  retried: boolean;
  /** Aborted when the client goes away before the answer. */
  signal: AbortSignal;
};

/** How a batch runs its actions: in the computer's queue, each between its events. */
type BatchDriver = {
  serialize: (work: () => Promise<void>) => Promise<void>;
  /** Runs the action, or answers the hold a policy put on it; `admitted`: approved, run it. */
  step: (
    request: ActionRequest,
    stop: AbortSignal,
    admitted: Hold | undefined,
  ) => Promise<ActionResult | Hold>;
  /** Waits for a person's decision on a held action, outside the computer's queue. */
  wait: (hold: Hold, signal: AbortSignal) => Promise<Decision>;
  refused: (
    request: ActionRequest,
    decision: Exclude<Decision, { status: 'approved' }>,
  ) => ActionResult;
  /** Called whenever the batch stops running (done, or nobody waits for it). */
  onIdle: () => void;
};

/**
 * One batch, shared by its request and the retries of it. It runs only while one of them waits:
 * when the last leaves, no further action starts (a wait under way is cut short and counts as not
 * done), and a retry arriving later carries on from the first action not done, so each action
 * runs once however often the request is sent.
 */
class BatchRun {
  private readonly results: ActionResult[] = [];
  private next = 0;
  private followers = 0;
  private interrupt: AbortController | undefined;
  private active: Promise<void> | undefined;
  /** The next action, held for a person's decision. */
  private held: Hold | undefined;
  /** The next action, approved by a person: checked once more and run. */
  private admitted: Hold | undefined;
  private settled = false;
  private settle!: { resolve: (answer: BatchResult) => void; reject: (error: unknown) => void };
  private readonly done = new Promise<BatchResult>(
    (resolve, reject) => (this.settle = { resolve, reject }),
  );
  /** Characters of the results held (screenshots in base64 among them), for RecentRuns. */
  retainedChars = 0;

  /** Dropped once the batch is done, so a remembered answer does not keep its computer. */
  private driver: BatchDriver | undefined;

  constructor(
    private readonly requests: ActionRequest[],
    driver: BatchDriver,
  ) {
    this.driver = driver;
    // Seen by whoever follows; with nobody following, a failure has no one to tell.
    this.done.catch(() => {});
  }

  get running(): boolean {
    return this.active !== undefined;
  }

  /** The answer once the batch is done; undefined if `closed` aborts first (nobody to answer). */
  follow(closed: AbortSignal): Promise<BatchResult | undefined> {
    if (this.settled) return this.done;
    if (closed.aborted) return Promise.resolve(undefined);
    this.followers += 1;
    this.active ??= this.runWhileFollowed();
    return new Promise<BatchResult | undefined>((resolve, reject) => {
      const leave = () => {
        this.followers -= 1;
        if (this.followers === 0) this.interrupt?.abort();
        resolve(undefined);
      };
      closed.addEventListener('abort', leave, { once: true });
      void this.done
        .then(resolve, reject)
        .finally(() => closed.removeEventListener('abort', leave));
    });
  }

  private async runWhileFollowed(): Promise<void> {
    const driver = this.driver!;
    try {
      while (await this.runUntilHeld(driver)) {
        // Held for a person: waits outside the computer's queue, while someone follows.
        const held = this.held!;
        const interrupt = (this.interrupt = new AbortController());
        const decision = await driver.wait(held, interrupt.signal);
        this.interrupt = undefined;
        // Nobody follows any more: a retry carries on from here, joining the same approval.
        if (decision.status === 'abandoned') break;
        this.held = undefined;
        if (decision.status === 'approved') {
          this.admitted = held;
          continue;
        }
        this.record(driver.refused(this.requests[this.next]!, decision));
        break;
      }
    } catch (error) {
      this.finish(() => this.settle.reject(error));
    }
    this.active = undefined;
    // A retry may have joined while the action the batch stopped after was still running.
    if (!this.settled && this.followers > 0) this.active = this.runWhileFollowed();
    else driver.onIdle();
  }

  /** Runs actions in the computer's queue; true when it stopped at one held for a person. */
  private async runUntilHeld(driver: BatchDriver): Promise<boolean> {
    await driver.serialize(() => this.runActions(driver));
    return this.held !== undefined && !this.settled && this.followers > 0;
  }

  private async runActions(driver: BatchDriver): Promise<void> {
    while (this.next < this.requests.length) {
      if (this.followers === 0) return;
      const request = this.requests[this.next]!;
      const interrupt = (this.interrupt = new AbortController());
      const outcome = await driver.step(request, interrupt.signal, this.admitted);
      this.interrupt = undefined;
      this.admitted = undefined;
      if (outcome instanceof Hold) {
        this.held = outcome;
        return;
      }
      // Only a wait takes the signal; cut short, it is not done, and runs again when carried on.
      if (interrupt.signal.aborted && request.action.type === 'wait' && outcome.status === 'error')
        continue;
      if (!this.record(outcome)) return;
    }
    const results = this.results;
    this.finish(() =>
      this.settle.resolve({ success: true, results, failed_index: null, error_message: null }),
    );
  }

  /** Keeps the next action's result; false when it failed, which ends the batch. */
  private record(result: ActionResult): boolean {
    this.results.push(result);
    this.retainedChars += JSON.stringify(result).length;
    this.next += 1;
    if (result.status !== 'error') return true;
    const failedIndex = this.next - 1;
    const message = result.error_message!;
    this.finish(() =>
      this.settle.resolve({
        success: false,
        results: this.results,
        failed_index: failedIndex,
        error_message: message,
      }),
    );
    return false;
  }

  private finish(settle: () => void): void {
    if (this.settled) return;
    this.settled = true;
    this.driver = undefined;
    settle();
  }
}

/** An action as its action_request event. */
function requestEvent(request: ActionRequest): ComputerEventInput {
  return {
    type: 'action_request',
    request_id: request.requestId,
    action: request.action,
    ...(request.source && { source: request.source }),
  };
}

/** The result of an action that did not run, or failed. */
function errorResult(request: ActionRequest, message: string): ActionResult {
  return {
    request_id: request.requestId,
    status: 'error',
    result: {},
    error_message: message,
    timestamp: now(),
  };
}

function notStarted(request: ActionRequest, why: string): string {
  return `the ${request.action.type} action was not started: ${why}`;
}

/** A result as its action_response event; a shell command's (debug) carries its output too. */
function responseEvent(result: ActionResult): ComputerEventInput {
  const { exit_code, stdout, stderr } = result.result as Record<string, unknown>;
  return {
    type: 'action_response',
    request_id: result.request_id,
    status: result.status,
    ...(result.status === 'error' && { error_message: result.error_message }),
    ...(typeof exit_code === 'number' && {
      exit_code,
      stdout: String(stdout),
      stderr: String(stderr),
    }),
  };
}

/** What to do instead, for actions some kinds of computer cannot perform. */
const INSTEAD: Record<string, string> = {
  change_proxy:
    'to browse through a proxy, use a browser computer (create it with use_advanced_proxy, or call change-proxy on it)',
};

function unsupported(type: string, kind: string): BenchtopError {
  const instead = INSTEAD[type];
  return invalidRequest(
    `${type} is not available on ${kind} computers${instead ? `; ${instead}` : ''}`,
    'type',
  );
}

/** The main tab, for results of actions that name none (wait, debug, finish). */
function mainTab(operator: Operator): string | undefined {
  return isTabbed(operator) ? operator.mainTabId() : undefined;
}
