import {
  PASSWORD_MASK,
  type Approval,
  type ApprovalListQuery,
  type ApprovalTarget,
  type Policy,
} from '../../../shared/approvals.js';
import { describeTarget } from '../../../shared/describe-attention.js';
import type { TerminalStatus } from '../../../shared/tasks.js';
import type { Action } from '../computers/action.js';
import type { Settings } from '../config.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { isTabbed, type PageLook } from '../computers/operator.js';
import { invalidRequest, notFound } from '../errors.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { newId, now } from '../ids.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { ApprovalStore } from './approval-store.js';
import {
  PolicyMatcher,
  pointOf,
  typesText,
  type GateSubject,
  type LookLevel,
} from './policy-matcher.js';
import { drawTarget } from './draw-target.js';

/** An action about to run on a computer, with what was under its point (see observe()). */
export type ObservedAction = {
  action: Action;
  /** The page's URL before it ran (browsers), else null. */
  url: string | null;
  /** The element under its point, or focused for typing (browsers), else null. */
  target: ApprovalTarget | null;
  source?: 'live_view';
  taskId?: string;
};
/** Calls `listener` before each action that runs on the computer, until the returned stop is called. */
export type ActionObserver = (
  computerId: string,
  listener: (seen: ObservedAction) => void,
) => () => void;

/** An action (or shell command) about to run, and who sent it. */
export type GateRequest = {
  session: ComputerSession;
  action: GateSubject['action'];
  tabId?: string;
  taskId?: string;
  source?: 'live_view';
  /** Who sent the action, as a person reads it: the approval shows it. */
  requester?: string;
  /** The SDK sent the request again (its first try timed out or failed). */
  retried?: boolean;
};

/** How a held action ended when it did not run. */
export type Refusal = { status: 'denied' | 'expired'; message: string };
export type Decision = { status: 'approved' } | Refusal | { status: 'abandoned' };

export type Verdict =
  { kind: 'allow' } | { kind: 'refuse'; message: string } | { kind: 'held'; hold: Hold };

const ALLOW: Verdict = { kind: 'allow' };

/**
 * Tries `attempt` until no person's decision holds it: a hold it gives is waited for, and once
 * approved the attempt runs again with that hold admitted (checked once more, then run). What the
 * attempt gave, or the decision that stopped it.
 */
export async function untilDecided<T>(
  wait: (hold: Hold, signal: AbortSignal | undefined) => Promise<Decision>,
  signal: AbortSignal | undefined,
  attempt: (admitted: Hold | undefined) => Promise<T | Hold>,
): Promise<{ done: T } | { stopped: Exclude<Decision, { status: 'approved' }> }> {
  let admitted: Hold | undefined;
  for (;;) {
    const outcome = await attempt(admitted);
    if (!(outcome instanceof Hold)) return { done: outcome };
    const decision = await wait(outcome, signal);
    if (decision.status !== 'approved') return { stopped: decision };
    admitted = outcome;
  }
}
const TASK_ENDINGS: Record<TerminalStatus, string> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'was cancelled',
  max_steps: 'reached its step limit',
};
const NOBODY: PageLook = { tabId: null, url: null, target: null };

/**
 * How long a held action whose request closed stays pending for a retry of it to join: the
 * SDKs give up on a request after their timeout (a minute by default) and send it again after a
 * backoff of at most 8 s. Not joined by then, nobody waits for it any more.
 */
export const RETRY_GRACE_MS = 15_000;

/**
 * One pending approval: the request that waits for it (or, once its request left, none until a
 * retry of it joins), and the decision.
 */
export class Hold {
  waiters = 0;
  timer: NodeJS.Timeout | undefined;
  /** Running while nobody waits for the action: a retry of its request stops it by joining. */
  orphanTimer: NodeJS.Timeout | undefined;
  /** A person approved it (it runs when its request, or a retry of it, comes to it). */
  approved = false;
  decide!: (decision: Decision) => void;
  readonly decision = new Promise<Decision>((resolve) => (this.decide = resolve));
  settle!: () => void;
  /** Resolved once the approval's status is final (approved and run, denied or expired). */
  readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(
    readonly approval: Approval,
    readonly org: string,
    /** The same action on the same computer and tab, from the same task: a retry joins it. */
    readonly key: string,
  ) {}
}

export type ApprovalDeps = {
  store: ApprovalStore;
  events: ComputerEvents;
  screenshots: ScreenshotStore;
  baseUrl: () => string;
  settings: () => Pick<Settings, 'policies' | 'approvals'>;
  /** How long a held action nobody waits for stays pending; RETRY_GRACE_MS unless a test says. */
  retryGraceMs?: number;
};

type Observer = (seen: ObservedAction) => void;

/**
 * The gate of docs/API.md §14 in front of every path that acts: policies decide allow, deny or
 * ask; an asked action is held as an approval for exactly that action (computer, tab, body, page
 * URL and target element) until a person decides, and runs only if none of those changed.
 */
export class ApprovalService {
  private matcher: { policies: readonly Policy[]; matcher: PolicyMatcher } | undefined;
  private readonly holds = new Map<string, Hold>();
  /**
   * Held actions denied while nobody waited for them, by hold key: a retry that comes before
   * `until` is told the same.
   */
  private readonly deniedInTheGap = new Map<string, { message: string; until: number }>();
  private readonly observers = new Map<string, Set<Observer>>();
  private readonly askedListeners = new Set<(org: string, approval: Approval) => void>();

  constructor(private readonly deps: ApprovalDeps) {}

  /** Approvals left pending by a previous run can no longer run: nothing waits for them. */
  init(): void {
    for (const { approval } of this.deps.store.pending()) {
      this.deps.store.update({
        ...approval,
        status: 'expired',
        decided_at: now(),
        status_reason: 'Benchtop restarted before a decision',
      });
    }
  }

  /**
   * Checks an action right before it would run (inside the computer's queue, so what it sees is
   * what it acts on). `admitted`: a hold a person approved, run now if nothing changed, else
   * expired and asked again.
   */
  async check(request: GateRequest, admitted?: Hold): Promise<Verdict> {
    let look: PageLook | undefined;
    let lookedAtTarget = false;
    const looker = async (level: LookLevel) => {
      if (!look || (level === 'target' && !lookedAtTarget)) {
        look = await this.look(request, level === 'target');
        lookedAtTarget ||= level === 'target';
      }
      return look;
    };
    // What is let through is seen by whoever observes the computer (a handoff's person log).
    const allow = async (): Promise<Verdict> => {
      const observers = this.observers.get(request.session.id);
      if (observers) this.notify(observers, request, await looker('target'));
      return ALLOW;
    };
    // A person acting in the window is the one who would approve.
    if (request.source === 'live_view') return allow();
    if (admitted) {
      const changed = this.changes(admitted, request, await looker('target'));
      if (!changed) {
        this.finish(admitted, 'approved', null);
        return allow();
      }
      this.finish(admitted, 'expired', changed);
    }
    const matcher = this.currentMatcher();
    const subject = {
      computerId: request.session.id,
      action: request.action,
      taskId: request.taskId,
    };
    const match = matcher.empty ? undefined : await matcher.match(subject, looker);
    if (!match || match.decision === 'allow') return allow();
    const { policy } = match;
    if (match.decision === 'deny') {
      return { kind: 'refuse', message: `denied: policy ${policy.id}${said(policy)}` };
    }
    const key = holdKey(request);
    const denied = request.retried ? this.deniedInTheGap.get(key) : undefined;
    if (denied && denied.until > Date.now()) return { kind: 'refuse', message: denied.message };
    const joined = [...this.holds.values()].find((held) => held.key === key && held.waiters === 0);
    // A retry of a request that left while held takes its place: one approval, asked once.
    if (joined) clearTimeout(joined.orphanTimer);
    const hold = joined ?? (await this.ask(request, policy, await looker('target')));
    // Claimed by this caller from now on, so a decision that comes before it waits finds it.
    hold.waiters += 1;
    return { kind: 'held', hold };
  }

  /**
   * Waits for the decision on a hold check() gave; 'abandoned' when `signal` aborts first (it
   * stays pending a while, for a retry of the request to join).
   */
  async wait(hold: Hold, signal: AbortSignal | undefined): Promise<Decision> {
    let leave = () => {};
    const abandoned = new Promise<Decision>((resolve) => {
      leave = () => resolve({ status: 'abandoned' });
      if (signal?.aborted) leave();
      else signal?.addEventListener('abort', leave, { once: true });
    });
    let decision: Decision | undefined;
    try {
      decision = await Promise.race([hold.decision, abandoned]);
      return decision;
    } finally {
      hold.waiters -= 1;
      signal?.removeEventListener('abort', leave);
      if (decision?.status === 'abandoned' && hold.waiters === 0) this.orphaned(hold);
    }
  }

  /**
   * A person lets the held action run. Answers once it ran (approved) or could not (expired:
   * what changed, and the action is asked again as a new approval; or its request closed and
   * no retry of it came).
   */
  async approve(org: string, id: string, note: string | undefined): Promise<Approval> {
    const hold = this.pendingHold(org, id);
    hold.approval.note = note ?? null;
    hold.approved = true;
    hold.decide({ status: 'approved' });
    await hold.settled;
    return this.get(org, id);
  }

  /**
   * A person refuses the held action: nothing runs; whoever sent it is told, a retry of a request
   * that left before the decision included (it is not asked about again).
   */
  deny(org: string, id: string, note: string | undefined): Approval {
    const hold = this.pendingHold(org, id);
    this.finish(hold, 'denied', null, note);
    if (hold.waiters === 0) {
      const now = Date.now();
      for (const [key, { until }] of this.deniedInTheGap) {
        if (until <= now) this.deniedInTheGap.delete(key);
      }
      // The latest denial of the same action counts, for its own grace.
      this.deniedInTheGap.set(hold.key, {
        message: denialMessage(hold.approval),
        until: now + (this.deps.retryGraceMs ?? RETRY_GRACE_MS),
      });
    }
    return this.get(org, id);
  }

  get(org: string, id: string): Approval {
    const approval = this.deps.store.get(org, id);
    if (!approval) throw notFound(`no approval ${id}; GET /approvals lists them`);
    return approval;
  }

  list(org: string, query: Partial<ApprovalListQuery> = {}): Approval[] {
    return this.deps.store.list(org, query);
  }

  /** Calls `listener` for each new approval (the attention queue, notifications). */
  onAsked(listener: (org: string, approval: Approval) => void): () => void {
    this.askedListeners.add(listener);
    return () => this.askedListeners.delete(listener);
  }

  /**
   * Calls `listener` before each action that runs on the computer with its page URL and target,
   * until the returned function is called (what a person did during a handoff).
   */
  observe(computerId: string, listener: Observer): () => void {
    let set = this.observers.get(computerId);
    if (!set) this.observers.set(computerId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.observers.get(computerId) === set)
        this.observers.delete(computerId);
    };
  }

  /** Held actions of a computer that ended can never run. */
  computerEnded(computerId: string): void {
    for (const hold of this.holds.values()) {
      if (hold.approval.computer_id === computerId) {
        this.finish(hold, 'expired', 'the computer ended before a decision');
      }
    }
  }

  /**
   * Held actions of a task that ended (cancelled, failed, Benchtop stopping) can never run: its
   * request is gone, and no retry of it will come.
   */
  taskEnded(taskId: string, ended: TerminalStatus): void {
    for (const hold of this.holds.values()) {
      if (hold.approval.task_id === taskId) {
        this.finish(hold, 'expired', `its task ${TASK_ENDINGS[ended]} before a decision`);
      }
    }
  }

  close(): void {
    for (const hold of this.holds.values()) {
      this.finish(hold, 'expired', 'Benchtop shut down before a decision');
    }
  }

  // ---- inside ------------------------------------------------------------------------------

  private currentMatcher(): PolicyMatcher {
    const policies = this.deps.settings().policies;
    if (this.matcher?.policies !== policies) {
      this.matcher = { policies, matcher: new PolicyMatcher(policies) };
    }
    return this.matcher.matcher;
  }

  /**
   * Nobody waits for the held action now: it stays pending (and, approved meanwhile, runs) if a
   * retry of its request joins within the grace, else it expires and leaves the queue.
   */
  private orphaned(hold: Hold): void {
    if (!this.holds.has(hold.approval.id)) return;
    const grace = this.deps.retryGraceMs ?? RETRY_GRACE_MS;
    hold.orphanTimer = setTimeout(
      () =>
        this.finish(
          hold,
          'expired',
          `${hold.approved ? 'approved, but nothing ran: ' : ''}its request was closed and not sent again within ${grace / 1000} s`,
        ),
      grace,
    );
    hold.orphanTimer.unref();
  }

  private async look(request: GateRequest, target: boolean): Promise<PageLook> {
    const { operator } = request.session;
    if (!isTabbed(operator)) return NOBODY;
    const { action } = request;
    const at = typesText(action) ? undefined : pointOf(action);
    // Only an action with a point or keys acts on an element: a screenshot or a read of the html
    // has no target, whatever has the focus (a Pay button just clicked, say).
    const element = target && (at !== undefined || typesText(action));
    return operator.look(request.tabId, at, element).catch(() => NOBODY);
  }

  private async ask(request: GateRequest, policy: Policy, look: PageLook): Promise<Hold> {
    const { session } = request;
    const approval: Approval = {
      id: newId('apr'),
      status: 'pending',
      computer_id: session.id,
      task_id: request.taskId ?? null,
      tab_id: look.tabId,
      action: shown(request.action, look.target),
      policy_id: policy.id,
      reason: policy.description ?? `policy ${policy.id} asks a person first`,
      requested_by: request.taskId === undefined ? (request.requester ?? null) : null,
      url: look.url,
      target: look.target,
      screenshot_url: await this.screenshot(request, look).catch(() => null),
      created_at: now(),
      decided_at: null,
      note: null,
      status_reason: null,
    };
    this.deps.store.insert(session.org, approval);
    const hold = new Hold(approval, session.org, holdKey(request));
    this.holds.set(approval.id, hold);
    // Waiting for a person is no idleness: the computer is there when they decide.
    void hold.settled.then(session.holdIdle());
    const seconds = this.deps.settings().approvals.timeout_seconds;
    hold.timer = setTimeout(
      () =>
        this.finish(hold, 'expired', `no decision within ${seconds} s (approvals.timeout_seconds)`),
      seconds * 1000,
    );
    hold.timer.unref();
    this.deps.events.publish(session.id, {
      type: 'approval_required',
      approval_id: approval.id,
      task_id: approval.task_id,
      action: approval.action,
      policy_id: approval.policy_id,
      reason: approval.reason,
      url: approval.url,
      target: approval.target,
      screenshot_url: approval.screenshot_url,
    });
    for (const listener of this.askedListeners) listener(session.org, approval);
    return hold;
  }

  /** The screen when asked, with the point acted on drawn. */
  private async screenshot(request: GateRequest, look: PageLook): Promise<string> {
    const shot = await request.session.operator.screenshot(look.tabId ?? request.tabId);
    const point = pointOf(request.action);
    const png = point ? await drawTarget(shot.png, point) : shot.png;
    const path = await this.deps.screenshots.save(request.session.id, png);
    return `${this.deps.baseUrl()}${path}`;
  }

  /** What differs between the approval and the action about to run; null when nothing does. */
  private changes(hold: Hold, request: GateRequest, look: PageLook): string | null {
    const { approval } = hold;
    if (request.session.status !== 'running') return 'the computer ended before the action ran';
    if (approval.tab_id !== look.tabId)
      return `the tab changed: ${approval.tab_id} → ${look.tabId}`;
    if (approval.url !== look.url) return `the page changed: ${approval.url} → ${look.url}`;
    const before = approval.target ? describeTarget(approval.target) : 'nothing';
    const after = look.target ? describeTarget(look.target) : 'nothing';
    if (before !== after) return `the target changed: ${before} → ${after}`;
    return null;
  }

  private pendingHold(org: string, id: string): Hold {
    const hold = this.holds.get(id);
    if (hold && hold.org === org) return hold;
    const approval = this.get(org, id);
    // Deterministic (not a 409, which the SDKs retry).
    throw invalidRequest(
      `approval ${id} is already ${approval.status}${approval.status_reason ? ` (${approval.status_reason})` : ''}; only a pending approval can be decided`,
    );
  }

  /** Records the final status, tells the computer's stream and whoever waits. */
  private finish(
    hold: Hold,
    status: 'approved' | 'denied' | 'expired',
    reason: string | null,
    note?: string,
  ): void {
    if (!this.holds.delete(hold.approval.id)) return;
    clearTimeout(hold.timer);
    clearTimeout(hold.orphanTimer);
    const approval = hold.approval;
    approval.status = status;
    approval.decided_at = now();
    if (note !== undefined) approval.note = note;
    approval.status_reason = reason;
    try {
      this.deps.store.update(approval);
    } finally {
      this.deps.events.publish(approval.computer_id, {
        type: 'approval_decided',
        approval_id: approval.id,
        task_id: approval.task_id,
        status,
        note: approval.note,
        status_reason: reason,
      });
      if (status === 'denied') {
        hold.decide({ status, message: denialMessage(approval) });
      } else if (status === 'expired') {
        hold.decide({ status, message: `approval expired: ${reason}` });
      }
      hold.settle();
    }
  }

  private notify(observers: Set<Observer>, request: GateRequest, look: PageLook): void {
    const seen: ObservedAction = {
      action: request.action as ObservedAction['action'],
      url: look.url,
      target: look.target,
      ...(request.source && { source: request.source }),
      ...(request.taskId && { taskId: request.taskId }),
    };
    for (const observer of observers) observer(seen);
  }
}

/** What the caller of a denied action is told. */
function denialMessage(approval: Approval): string {
  return `denied: ${approval.note || 'a person denied it'}`;
}

function said(policy: Policy): string {
  return policy.description ? ` (${policy.description})` : '';
}

function holdKey(request: GateRequest): string {
  return JSON.stringify([
    request.session.id,
    request.tabId ?? null,
    request.taskId ?? null,
    request.action,
  ]);
}

/** The held action as an approval shows it: the action as it runs, a command with its text. */
/**
 * The held action as a person and the stores see it: text typed into a password field is
 * masked (the hold keeps the real action, so what runs is still exactly what was asked about).
 */
function shown(action: GateSubject['action'], target: ApprovalTarget | null): Approval['action'] {
  const copy = { ...action } as Approval['action'];
  if (target?.input_type === 'password' && typeof copy.text === 'string') copy.text = PASSWORD_MASK;
  return copy;
}
