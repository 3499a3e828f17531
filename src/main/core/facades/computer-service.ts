import type { ActionResult, BatchResult, ComputerAction } from '../../../shared/actions.js';
import type { Computer, ComputerStatus, CreateComputerBody } from '../../../shared/computers.js';
import type { ActionRunner, Gate } from '../actions/action-runner.js';
import { untilDecided } from '../approvals/approval-service.js';
import { BenchtopError } from '../errors.js';
import type { CommandRun } from '../shell/command-run.js';
import type { CommandBody, ShellService } from '../shell/shell-service.js';
import type { ComputerRegistry } from '../computers/computer-registry.js';
import type { ComputerSession } from '../computers/computer-session.js';
import type { DownloadFolder } from '../computers/operator.js';
import { normalizeAction } from '../computers/normalize-action.js';

export type ActOptions = {
  /** Aborted when whoever asked stops waiting: a wait or a navigation under way ends. */
  signal?: AbortSignal;
  /** The SDK re-sent the request (x-stainless-retry-count above 0). */
  retried?: boolean;
  /** A person sent it from the window's live view (recorded as their input). */
  source?: 'live_view';
  /** Who sent it, as a person reads it (an approval of it names them). */
  requester?: string;
};

export type BatchOptions = {
  /** The request's body: a retry (same body) joins the batch instead of running it again. */
  body: unknown;
  retried: boolean;
  /** Who sent it, as a person reads it (an approval of one of its actions names them). */
  requester?: string;
  /** Aborted when the client goes away: no further action starts. */
  signal: AbortSignal;
};

export type CdpDoor = {
  browserUrl: string;
  downloadsDir: string;
  tabOpening(): void;
  busyUntil(done: Promise<unknown>): void;
  ended: AbortSignal;
  touch(): void;
};

export type ServiceDeps = {
  registry: ComputerRegistry;
  actions: ActionRunner;
  shell: ShellService;
  /** Where the server listens, for the absolute URLs of a computer's view. */
  baseUrl: () => string;
  /** Policies checked before a shell command starts. */
  gate?: Gate;
  /** The downloads a computer's recording kept, for after it ended. */
  recordedDownloads?: (org: string, id: string) => DownloadFolder | undefined;
};

/**
 * Computers as the API sees them, scoped by organization: one call per request. Errors about an
 * action name its fields relative to the action (`['url']`), and in a batch relative to the
 * list (`[3, 'url']`); the caller places them in its request.
 */
export class ComputerService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(org: string, body: CreateComputerBody): Promise<Computer> {
    return (await this.deps.registry.create(org, body)).view(this.deps.baseUrl());
  }

  /** The computer's view, running or recently ended. */
  view(org: string, id: string): Computer {
    return this.get(org, id).view(this.deps.baseUrl());
  }

  status(org: string, id: string): ComputerStatus {
    return this.get(org, id).statusView();
  }

  /** The organization's running computers. */
  list(org: string): Computer[] {
    const baseUrl = this.deps.baseUrl();
    return this.deps.registry.list(org).map((session) => session.view(baseUrl));
  }

  /**
   * What a CDP client attached through a computer's cdp_url reaches: its browser, the folder its
   * downloads go to, when the computer ends, and a way to count its traffic as activity.
   */
  cdpDoor(id: string, token: string | undefined): CdpDoor {
    const session = this.deps.registry.cdpDoor(id, token);
    const { browserUrl, downloadsDir, tabOpening, busyUntil } = session.cdp;
    const touch = () => session.touch();
    return { browserUrl, downloadsDir, tabOpening, busyUntil, ended: session.ended.signal, touch };
  }

  /** Ends a computer on request; `by` names who asked ("Python SDK 2.39.0 (key sk_…)"). */
  delete(org: string, id: string, by?: string): Promise<void> {
    return this.deps.registry.delete(org, id, by);
  }

  /**
   * What a computer's browser downloaded: the running computer's own folder, else what its
   * recording kept (a browser computer's files outlive it as long as its recording does).
   */
  downloads(org: string, id: string): DownloadFolder {
    try {
      return this.getRunning(org, id).operator.downloads;
    } catch (error) {
      const kept = this.deps.recordedDownloads?.(org, id);
      if (kept) return kept;
      throw error;
    }
  }

  /** Counts as activity; when the idle timeout now runs out. */
  keepalive(org: string, id: string): { status: 'running'; idle_expires_at: string | null } {
    const session = this.deps.registry.keepalive(org, id);
    return { status: 'running', idle_expires_at: session.statusView().idle_expires_at };
  }

  /** Performs one action (any alias) on a running computer; the action is checked first. */
  async act(
    org: string,
    id: string,
    action: ComputerAction,
    options: ActOptions = {},
  ): Promise<ActionResult> {
    const request = normalizeAction(action);
    const session = this.getRunning(org, id);
    return await this.deps.actions.run(session, {
      ...request,
      signal: options.signal,
      retried: options.retried,
      source: options.source,
      requester: options.requester,
    });
  }

  /**
   * Runs actions in order, stopping at the first failure. Every action is checked before any
   * runs. Undefined once `options.signal` aborted before the end (nobody to answer).
   */
  async batch(
    org: string,
    id: string,
    actions: ComputerAction[],
    options: BatchOptions,
  ): Promise<BatchResult | undefined> {
    const requests = actions.map((action, index) => {
      try {
        return { ...normalizeAction(action), requester: options.requester };
      } catch (error) {
        throw error instanceof BenchtopError ? error.at([index]) : error;
      }
    });
    const session = this.getRunning(org, id);
    return await this.deps.actions.batch(session, requests, options);
  }

  /**
   * Starts a shell command (or joins the one a retry of the request started). A bad cwd is an
   * error about the body's `cwd`.
   */
  async exec(
    org: string,
    id: string,
    kind: 'exec' | 'exec_sync',
    body: CommandBody,
    options: { requestId: string; retried: boolean; requester?: string; signal?: AbortSignal },
  ): Promise<CommandRun> {
    const session = this.getRunning(org, id);
    // A retry of a command that already started joins it: it was let through then.
    if (!(options.retried && this.deps.shell.joinable(session, kind, body))) {
      await this.admitCommand(session, kind, body.command, options);
    }
    return this.deps.shell.start(session, kind, body, options);
  }

  /**
   * The policies' verdict on a shell command; one held for a person waits for the decision.
   * Throws forbidden ("denied: …", "approval expired: …") when it may not run.
   */
  private async admitCommand(
    session: ComputerSession,
    kind: 'exec' | 'exec_sync',
    command: string,
    { requester, signal, retried }: { requester?: string; signal?: AbortSignal; retried?: boolean },
  ): Promise<void> {
    const { gate } = this.deps;
    if (!gate) return;
    const request = { session, action: { type: kind, command }, requester, retried };
    const outcome = await untilDecided(
      (hold, waitSignal) => gate.wait(hold, waitSignal),
      signal,
      async (admitted) => {
        const verdict = await gate.check(request, admitted);
        return verdict.kind === 'held' ? verdict.hold : verdict;
      },
    );
    if ('done' in outcome) {
      if (outcome.done.kind === 'refuse')
        throw new BenchtopError('forbidden', outcome.done.message);
      return;
    }
    const { stopped } = outcome;
    throw new BenchtopError(
      'forbidden',
      stopped.status === 'abandoned'
        ? 'the command was not started: its request was closed while it waited for approval'
        : stopped.message,
    );
  }

  /** The computer's session, running or recently ended (events, screencast). */
  get(org: string, id: string): ComputerSession {
    return this.deps.registry.get(org, id);
  }

  /** Like get(), but an ended computer is a 404 that says why it ended. */
  getRunning(org: string, id: string): ComputerSession {
    return this.deps.registry.getRunning(org, id);
  }
}
