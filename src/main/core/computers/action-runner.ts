import { setTimeout as sleep } from 'node:timers/promises';
import type { ActionResult, BatchResult } from '../../../shared/actions.js';
import { ActionFailure, BenchtopError, invalidRequest, notFound } from '../errors.js';
import type { ComputerEventInput, ComputerEvents } from '../events/computer-events.js';
import { now } from '../ids.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import { truncateText } from '../shell/command-run.js';
import type { ShellService } from '../shell/shell-service.js';
import type { ActionOutcome, ActionRequest } from './action.js';
import type { ComputerSession } from './computer-session.js';

/** Actions whose result always carries page_context (when they ran in a tab). */
const ALWAYS_CONTEXT = new Set(['navigate', 'new_tab', 'switch_tab', 'close_tab', 'list_tabs']);

export type RunnerDeps = {
  screenshots: ScreenshotStore;
  baseUrl: () => string;
  shell: ShellService;
  /** Every action is published as action_request, then action_response. */
  events: ComputerEvents;
};

/**
 * Runs actions on a computer, one at a time, and shapes ActionResults. Failures of the action
 * itself become `status: "error"`; a BenchtopError (bad input for this computer) propagates so
 * the single-action endpoints can answer with its status.
 */
export class ActionRunner {
  constructor(private readonly deps: RunnerDeps) {}

  run(session: ComputerSession, request: ActionRequest): Promise<ActionResult> {
    return session.serialize(() => this.runReported(session, request, false));
  }

  /** Runs in order and stops at the first failure; nothing else runs on the computer meanwhile. */
  batch(session: ComputerSession, requests: ActionRequest[]): Promise<BatchResult> {
    return session.serialize(async () => {
      const results: ActionResult[] = [];
      for (const [index, request] of requests.entries()) {
        const result = await this.runReported(session, request, true);
        results.push(result);
        if (result.status === 'error') {
          return {
            success: false,
            results,
            failed_index: index,
            error_message: result.error_message!,
          };
        }
      }
      return { success: true, results, failed_index: null, error_message: null };
    });
  }

  /** Runs one action between its action_request and action_response events. */
  private async runReported(
    session: ComputerSession,
    request: ActionRequest,
    failSoft: boolean,
  ): Promise<ActionResult> {
    const publish = (event: ComputerEventInput) => this.deps.events.publish(session.id, event);
    publish({ type: 'action_request', request_id: request.requestId, action: request.action });
    try {
      const result = await this.runNow(session, request, failSoft);
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
    failSoft: boolean,
  ): Promise<ActionResult> {
    const base = { request_id: request.requestId };
    if (session.status !== 'running') {
      const error = notFound(`computer ${session.id} has ended (${session.terminationReason})`);
      if (!failSoft) throw error;
      return {
        ...base,
        status: 'error',
        result: {},
        error_message: error.message,
        timestamp: now(),
      };
    }
    session.touch();
    try {
      const outcome = await this.execute(session, request);
      const pageContext = await this.contextFor(session, request, outcome.executedTabId);
      return {
        ...base,
        status: 'success',
        result: outcome.result,
        ...(outcome.executedTabId && { executed_tab_id: outcome.executedTabId }),
        ...(pageContext && { page_context: pageContext }),
        timestamp: now(),
      };
    } catch (error) {
      if (error instanceof BenchtopError && !failSoft) throw error;
      const message = error instanceof Error ? error.message : String(error);
      return {
        ...base,
        status: 'error',
        result: {},
        error_message:
          session.status === 'running'
            ? message
            : `computer ${session.id} ended during the action (${session.terminationReason})`,
        timestamp: now(),
      };
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
    // A desktop action ran in a tab only when it drove the desktop's browser, which names the
    // tab; a click or a wait there acts on the whole screen and has no page to describe.
    const tab = session.init.kind === 'browser' ? (tabId ?? request.tabId) : tabId;
    return session.operator.pageContext(tab).catch(() => undefined);
  }

  private async execute(session: ComputerSession, request: ActionRequest): Promise<ActionOutcome> {
    const { action } = request;
    const { operator } = session;
    switch (action.type) {
      case 'wait':
        await sleep(action.ms, undefined, { signal: session.ended.signal }).catch(() => {
          throw new ActionFailure('the computer ended during the wait');
        });
        return { result: {}, executedTabId: operator.mainTabId() };
      case 'screenshot':
        return this.screenshot(session, request);
      case 'point_and_type': {
        const click = { type: 'click', at: action.at, button: 'left', count: 1 } as const;
        await operator.perform({ ...request, action: click });
        return operator.perform({ ...request, action: { type: 'type', text: action.text } });
      }
      case 'debug':
        return { result: await this.debug(session, request), executedTabId: operator.mainTabId() };
      case 'finish': {
        const { status, result } = action;
        return {
          result: {
            ...(status !== undefined && { status }),
            ...(result !== undefined && { result }),
          },
          executedTabId: operator.mainTabId(),
        };
      }
      default:
        if (!operator.supports.has(action.type)) throw unsupported(action.type, session.init.kind);
        return operator.perform(request);
    }
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
    const run = await this.deps.shell.start(session, 'debug', spec, {
      requestId: request.requestId,
      retried: request.retried ?? false,
      cwdParam: `${request.fieldPrefix}debug.cwd`,
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

/** A result as its action_response event; a shell command's (debug) carries its output too. */
function responseEvent(result: ActionResult): ComputerEventInput {
  const { exit_code, stdout, stderr } = result.result;
  return {
    type: 'action_response',
    request_id: result.request_id,
    status: result.status,
    ...(result.error_message !== undefined && { error_message: result.error_message }),
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
