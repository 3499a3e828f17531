import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  ComputerKind,
  CreateComputerBody,
  TerminationReason,
} from '../../../shared/computers.js';
import { BenchtopError, invalidRequest, notFound } from '../errors.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { newId } from '../ids.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { EnvironmentStore } from '../store/environment-store.js';
import { makeDirectory } from '../storage-errors.js';
import type { OrganizationPolicy } from '../sandbox/organization-policy.js';
import { systemClock, type Clock } from './clock.js';
import { checkCdpDoor, type CdpSession } from './cdp-access.js';
import { ComputerSession } from './computer-session.js';
import type { ComputerDriver, ComputerPlan, RecordingSink } from './drivers/driver.js';
import { hasTerminal } from './operator.js';

const DEFAULT_IDLE_SECONDS = 120;
/** Terminated computers stay retrievable this long (the contract asks for at least an hour). */
export const KEEP_TERMINATED_MS = 65 * 60 * 1000;
/** Screenshot URLs outlive their computer by this much. */
const SCREENSHOT_GRACE_MS = 10 * 60 * 1000;

/** The flight recorder as the registry sees it: told when a computer begins, runs and ends. */
export type RecordingHooks = {
  /** Before the driver starts it; undefined when it records nothing. */
  begin(
    computer: { id: string; org: string; kind: ComputerKind },
    wanted?: boolean,
  ): RecordingSink | undefined;
  /** Its create failed: nothing of it is kept. */
  cancel(id: string): Promise<void>;
  /** It runs (its screen can be captured). */
  watch(session: ComputerSession): void;
  /** It is ending, its operator still open (the last look at its screen). */
  closing(session: ComputerSession): Promise<void>;
  /** It ended and its operator is closed (a browser's trace is written). */
  end(id: string, reason: TerminationReason): void;
};

export type RegistryDeps = {
  /** One driver per kind: everything kind-specific (validation, start, saving) is theirs. */
  drivers: ReadonlyMap<ComputerKind, ComputerDriver>;
  /** What an organization may create, and whether its computers run sandboxed. */
  policy: OrganizationPolicy;
  /** How many computers of a kind one organization may have (read at each create). */
  quota: (kind: ComputerKind) => number;
  /** limits.max_tabs as it is now (running computers follow a change). */
  maxTabs: () => number;
  screenshots: ScreenshotStore;
  workspaces: string;
  environments: EnvironmentStore;
  /** Where terminations, tabs and navigations are published. */
  events: ComputerEvents;
  recorder?: RecordingHooks;
  clock?: Clock;
};

/**
 * Every computer of every organization: creation through its kind's driver, lookup scoped by
 * org, quotas, lifetimes, retention of ended computers, termination.
 */
export class ComputerRegistry {
  private readonly sessions = new Map<string, ComputerSession>();
  /** Per computer: the cancel of its lifetime check, then of its forgetting. */
  private readonly timers = new Map<string, () => void>();
  /** Resources one computer at a time may hold (the host display), and who holds them. */
  private readonly holders = new Map<string, string>();
  /** Creates in flight per org and kind. */
  private readonly creating = new Map<string, number>();
  /** Terminations in flight: close() waits for those it did not start too (a lost backend's). */
  private readonly ending = new Set<Promise<unknown>>();
  private readonly clock: Clock;

  constructor(private readonly deps: RegistryDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  async create(org: string, body: CreateComputerBody): Promise<ComputerSession> {
    await this.checkEnvironment(org, body);
    const driver = this.driver(body.kind);
    const plan = driver.prepare(body);
    const { policy } = this.deps;
    policy.checkCreate(org, body.kind, plan.onHost);
    const sandboxed = plan.onHost ? false : await policy.sandboxed(org, body.kind);
    const id = newId('comp');
    // The slot is taken before the first await, so simultaneous creates cannot pass the limit.
    const release = this.reserve(org, body.kind);
    try {
      this.claim(id, plan);
    } catch (error) {
      release();
      throw error;
    }
    const workspace = join(this.deps.workspaces, id);
    let recording: RecordingSink | undefined;
    try {
      recording = this.deps.recorder?.begin({ id, org, kind: body.kind }, body.recording);
      await makeDirectory(workspace);
      // A crash can only end a computer that exists: one reported while it starts (a Grid node
      // lost between its session's first check and here) ends it as soon as it does.
      const created: { session?: ComputerSession; crashed?: 'crashed' | 'backend_lost' } = {};
      const started = await plan.start({
        id,
        org,
        workspace,
        privateDir: policy.privateDir(id),
        environmentId: body.environment_id,
        sandboxed,
        network: policy.network(org),
        terminal: policy.mayExec(org),
        maxTabs: this.deps.maxTabs,
        recording,
        report: (activity) => this.deps.events.publish(id, activity),
        onCrash: (reason = 'crashed') => {
          if (created.session) void this.terminate(created.session, reason);
          else created.crashed ??= reason;
        },
      });
      const session = new ComputerSession(
        {
          id,
          org,
          kind: body.kind,
          display: started.display ?? plan.display,
          persistent: body.persistent ?? false,
          environmentId: body.environment_id ?? null,
          contextId: body.context_id ?? null,
          workspace,
          env: started.env,
          sandboxed,
          maxLifetimeSeconds: body.max_lifetime_seconds ?? body.timeout_seconds ?? null,
          inactivityTimeoutSeconds: body.inactivity_timeout_seconds ?? DEFAULT_IDLE_SECONDS,
          idleTimeoutEnabled: body.idle_timeout_enabled ?? body.auto_kill ?? true,
        },
        started.operator,
        this.clock,
      );
      session.sandbox = started.sandbox;
      session.cdp = started.cdp;
      session.backend = started.backend;
      created.session = session;
      this.sessions.set(id, session);
      this.arm(session);
      this.deps.recorder?.watch(session);
      if (created.crashed) void this.terminate(session, created.crashed);
      return session;
    } catch (error) {
      this.unclaim(id);
      await this.deps.recorder?.cancel(id).catch(() => {});
      await rm(workspace, { recursive: true, force: true });
      await rm(policy.privateDir(id), { recursive: true, force: true });
      throw error;
    } finally {
      release();
    }
  }

  /**
   * After a settings change: a computer whose organization may no longer run commands loses its
   * terminal, so nothing typed into it runs anything. (Switched back on, computers started from
   * then on get one.)
   */
  settingsChanged(): void {
    for (const session of this.sessions.values()) {
      const { operator } = session;
      if (session.status === 'running' && !this.deps.policy.mayExec(session.org)) {
        if (hasTerminal(operator)) operator.endTerminal();
      }
    }
  }

  private driver(kind: ComputerKind): ComputerDriver {
    const driver = this.deps.drivers.get(kind);
    if (!driver) throw invalidRequest(`no driver for ${kind} computers here`, 'kind');
    return driver;
  }

  /** Takes the plan's exclusive resource for computer id, or says who holds it. */
  private claim(id: string, plan: ComputerPlan): void {
    if (!plan.exclusive) return;
    plan.exclusive.checkAvailable();
    const holder = this.holders.get(plan.exclusive.resource);
    if (holder) throw plan.exclusive.busy(holder);
    this.holders.set(plan.exclusive.resource, id);
  }

  private unclaim(id: string): void {
    for (const [resource, holder] of this.holders) {
      if (holder === id) this.holders.delete(resource);
    }
  }

  /** A saved environment a create restores must exist and be of the kind asked for. */
  private async checkEnvironment(org: string, body: CreateComputerBody): Promise<void> {
    const id = body.environment_id;
    if (id === undefined) return;
    const meta = await this.deps.environments.get(org, id);
    if (meta.kind !== body.kind) {
      throw invalidRequest(
        `environment ${id} was saved from a ${meta.kind} computer; create it with kind "${meta.kind}"`,
        'environment_id',
      );
    }
  }

  /** Counts a computer being created against the org's limit until it is registered. */
  private reserve(org: string, kind: ComputerKind): () => void {
    const limit = this.deps.quota(kind);
    const slot = `${org}\u0000${kind}`;
    const pending = this.creating.get(slot) ?? 0;
    const running = this.list(org).filter((session) => session.spec.kind === kind).length;
    if (running + pending >= limit) {
      throw new BenchtopError(
        'concurrency_limit',
        `organization ${org} already has ${running + pending} ${kind} computers (limit ${limit}); delete one first`,
        { retryAfterSeconds: 1 },
      );
    }
    this.creating.set(slot, pending + 1);
    return () => this.creating.set(slot, (this.creating.get(slot) ?? 1) - 1);
  }

  /** The computer if it belongs to org, running or recently terminated. */
  get(org: string, id: string): ComputerSession {
    const session = this.sessions.get(id);
    if (!session || session.org !== org) throw notFound(`no computer ${id}`, 'id');
    return session;
  }

  /** Like get(), but a terminated computer is a 404 that says why it ended. */
  getRunning(org: string, id: string): ComputerSession {
    const session = this.get(org, id);
    if (session.status !== 'running') {
      throw notFound(
        `computer ${id} has ended (${session.terminationReason} at ${new Date(session.terminatedAt!).toISOString()})`,
        'id',
      );
    }
    return session;
  }

  /** The running computer a CDP client may attach to with this token (docs/API.md §16). */
  cdpDoor(id: string, token: string | undefined): CdpSession {
    return checkCdpDoor(this.sessions.get(id), id, token);
  }

  /** The tokens of running computers' CDP doors (kept out of recordings as secrets). */
  cdpTokens(): string[] {
    return [...this.sessions.values()].flatMap((session) =>
      session.cdp && session.status === 'running' ? [session.cdp.token] : [],
    );
  }

  list(org: string): ComputerSession[] {
    return [...this.sessions.values()].filter(
      (session) => session.org === org && session.status === 'running',
    );
  }

  /** Ends a computer on request; `by` says who asked (see Computer's ended_by). */
  async delete(org: string, id: string, by?: string): Promise<void> {
    await this.terminate(this.get(org, id), 'deleted', by);
  }

  keepalive(org: string, id: string): ComputerSession {
    const session = this.getRunning(org, id);
    session.touch();
    return session;
  }

  /** Checks lifetimes exactly at the next deadline; activity only moves the deadline later. */
  private arm(session: ComputerSession): void {
    this.timers.get(session.id)?.();
    const deadline = session.nextDeadline();
    if (!deadline || session.status !== 'running') return;
    const cancel = this.clock.schedule(
      () => {
        const due = session.nextDeadline();
        if (due && due.at <= this.clock.now()) void this.terminate(session, due.reason);
        else this.arm(session);
      },
      Math.max(0, deadline.at - this.clock.now()),
    );
    this.timers.set(session.id, cancel);
  }

  async terminate(session: ComputerSession, reason: TerminationReason, by?: string): Promise<void> {
    if (session.status === 'terminated') return;
    session.status = 'terminated';
    session.terminatedAt = this.clock.now();
    session.terminationReason = reason;
    session.endedBy = by;
    this.deps.events.publish(session.id, {
      type: 'status',
      status: 'terminated',
      termination_reason: reason,
      ...(by !== undefined && { ended_by: by }),
    });
    session.ended.abort();
    this.unclaim(session.id);
    this.timers.get(session.id)?.();
    const forget = this.clock.schedule(() => {
      this.sessions.delete(session.id);
      this.timers.delete(session.id);
    }, KEEP_TERMINATED_MS);
    this.timers.set(session.id, forget);
    this.deps.screenshots.release(session.id, reason === 'shutdown' ? 0 : SCREENSHOT_GRACE_MS);
    const ending = this.windDown(session, reason);
    this.ending.add(ending);
    try {
      await ending;
    } finally {
      this.ending.delete(ending);
    }
  }

  /** Ends what the computer holds: its last look, its state, its operator, its recording, its files. */
  private async windDown(session: ComputerSession, reason: TerminationReason): Promise<void> {
    // Its driver says whether its state is read before the close or after; a failed save still
    // frees the computer.
    const driver = this.driver(session.spec.kind);
    // A crashed or lost browser has no screen left to look at.
    if (reason !== 'crashed' && reason !== 'backend_lost') {
      await this.deps.recorder?.closing(session).catch(() => {});
    }
    const savedAfterClose = driver.savesAfterClose === true;
    if (savedAfterClose) await session.operator.close();
    const failed = await this.save(session, driver).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    if (!savedAfterClose) await session.operator.close();
    // The recording is finished in the background; one that cannot be (a full disk) does not
    // keep the computer from ending.
    try {
      this.deps.recorder?.end(session.id, reason);
    } catch {
      // The recording keeps what it had; the computer has ended.
    }
    // A workspace the disk will not let go of (read-only, permissions) only takes space; the
    // computer has ended either way, and a failed save is the error worth reporting.
    const gone = (dir: string) => rm(dir, { recursive: true, force: true }).catch(() => {});
    await Promise.all([
      gone(session.spec.workspace),
      gone(this.deps.policy.privateDir(session.id)),
    ]);
    if (failed && reason === 'deleted') throw failed;
  }

  /** A persistent computer's state, as its environment (the one it came from, else its own id). */
  private async save(session: ComputerSession, driver: ComputerDriver): Promise<void> {
    const { persistent, environmentId, org, id, workspace } = session.spec;
    if (!persistent || !driver.saveState) return;
    const state = await driver.saveState(session.operator, workspace);
    await this.deps.environments.save(org, environmentId ?? id, id, state);
  }

  async close(): Promise<void> {
    const running = [...this.sessions.values()].filter((session) => session.status === 'running');
    await Promise.all(running.map((session) => this.terminate(session, 'shutdown')));
    await Promise.allSettled([...this.ending]);
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}
