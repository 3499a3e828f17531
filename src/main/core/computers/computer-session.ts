import type {
  Computer,
  ComputerKind,
  ComputerStatus,
  TerminationReason,
} from '../../../shared/computers.js';
import type { Display } from '../../../shared/common.js';
import type { ComputerSandbox } from '../sandbox/computer-sandbox.js';
import type { CdpAccess } from './cdp-access.js';
import { systemClock, type Clock } from './clock.js';
import type { Operator } from './operator.js';

export type Lifetimes = {
  maxLifetimeSeconds: number | null;
  inactivityTimeoutSeconds: number;
  idleTimeoutEnabled: boolean;
};

/** A computer's record: what it is, fixed at creation. */
export type SessionSpec = Lifetimes & {
  id: string;
  org: string;
  kind: ComputerKind;
  display: Display;
  persistent: boolean;
  environmentId: string | null;
  contextId: string | null;
  workspace: string;
  /** Variables every shell command of this computer runs with (DISPLAY for a desktop). */
  env: Record<string, string>;
  /** Its commands and desktop programs run in a sandbox (decided at creation). */
  sandboxed: boolean;
};

const iso = (ms: number) => new Date(ms).toISOString();

/** One computer: its record, its lifetimes, its operator, and a queue so actions never interleave. */
export class ComputerSession {
  readonly createdAt: number;
  lastActivityAt: number;
  status: 'running' | 'terminated' = 'running';
  terminatedAt: number | undefined;
  terminationReason: TerminationReason | undefined;
  /** Who ended it on request (termination reason deleted), for a person who wonders. */
  endedBy: string | undefined;
  /** Aborted when the computer ends, so waits and commands stop with it. */
  readonly ended = new AbortController();
  private queue: Promise<unknown> = Promise.resolve();
  /** What keeps it from idling out meanwhile (see holdIdle). */
  private idleHolds = 0;
  /** The sandbox its commands run in, once started (see OrganizationPolicy). */
  sandbox: ComputerSandbox | undefined;
  /** Set when it was created with cdp: its browser's endpoint and the token that opens it. */
  cdp: CdpAccess | undefined;
  /** The browser backend it runs on (browser.backends); undefined for a desktop. */
  backend: string | undefined;

  constructor(
    readonly spec: SessionSpec,
    readonly operator: Operator,
    private readonly clock: Clock = systemClock,
  ) {
    this.createdAt = clock.now();
    this.lastActivityAt = this.createdAt;
  }

  get id(): string {
    return this.spec.id;
  }
  get org(): string {
    return this.spec.org;
  }

  touch(): void {
    this.lastActivityAt = this.clock.now();
  }

  /**
   * Keeps the computer from idling out until the returned function is called: while an agent
   * task runs on it or waits paused, and while an action on it waits for a person's approval.
   * Nobody sends actions then, yet the computer is in use. It counts as active all along, and
   * its idle time starts afresh when the last hold ends. Its max lifetime still applies.
   */
  holdIdle(): () => void {
    this.idleHolds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.idleHolds--;
      this.touch();
    };
  }

  /** Something keeps it from idling out (see holdIdle). */
  private get idleHeld(): boolean {
    return this.idleHolds > 0;
  }

  /** When it was last active: now, while something holds it. */
  private get activeAt(): number {
    return this.idleHeld ? this.clock.now() : this.lastActivityAt;
  }

  /** Runs work after everything queued before it on this computer. */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  /** The next moment a lifetime runs out, and which one. */
  nextDeadline(): { at: number; reason: TerminationReason } | undefined {
    const { maxLifetimeSeconds, inactivityTimeoutSeconds, idleTimeoutEnabled } = this.spec;
    const deadlines: Array<{ at: number; reason: TerminationReason }> = [];
    if (maxLifetimeSeconds !== null) {
      deadlines.push({ at: this.createdAt + maxLifetimeSeconds * 1000, reason: 'max_lifetime' });
    }
    if (idleTimeoutEnabled) {
      deadlines.push({
        at: this.activeAt + inactivityTimeoutSeconds * 1000,
        reason: 'idle_timeout',
      });
    }
    return deadlines.sort((a, b) => a.at - b.at)[0];
  }

  statusView(): ComputerStatus {
    const { maxLifetimeSeconds, inactivityTimeoutSeconds, idleTimeoutEnabled } = this.spec;
    return {
      id: this.id,
      status: this.status,
      created_at: iso(this.createdAt),
      last_activity_at: iso(this.activeAt),
      expires_at:
        maxLifetimeSeconds === null ? null : iso(this.createdAt + maxLifetimeSeconds * 1000),
      idle_expires_at:
        idleTimeoutEnabled && this.status === 'running'
          ? iso(this.activeAt + inactivityTimeoutSeconds * 1000)
          : null,
      max_lifetime_seconds: maxLifetimeSeconds,
      inactivity_timeout_seconds: inactivityTimeoutSeconds,
      idle_timeout_enabled: idleTimeoutEnabled,
      auto_kill: idleTimeoutEnabled,
      idle_held: this.idleHeld,
    };
  }

  /** Its CDP door while it runs (the door refuses it once it ended, so it is not shown then). */
  private cdpUrl(baseUrl: string): string | null {
    if (!this.cdp || this.status !== 'running') return null;
    const ws = baseUrl.replace(/^http/, 'ws');
    return `${ws}/cdp/${this.id}?token=${this.cdp.token}`;
  }

  view(baseUrl: string): Computer {
    const base = `${baseUrl}/computers/${this.id}`;
    return {
      ...this.statusView(),
      kind: this.spec.kind,
      persistent: this.spec.persistent,
      environment_id: this.spec.environmentId,
      context_id: this.spec.contextId,
      display: { ...this.spec.display },
      endpoints: {
        events: `${base}/events`,
        screencast: `${base}/screencast`,
        live_view: `${baseUrl}/ui/#/computers/${this.id}`,
      },
      cdp_url: this.cdpUrl(baseUrl),
      backend: this.backend ?? null,
      ...(this.terminatedAt !== undefined && {
        terminated_at: iso(this.terminatedAt),
        termination_reason: this.terminationReason,
        ...(this.endedBy !== undefined && { ended_by: this.endedBy }),
      }),
    };
  }
}
