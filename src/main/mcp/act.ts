import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ActionResult, ComputerAction } from '../../shared/actions.js';
import type { Approval } from '../../shared/approvals.js';
import type { McpSession } from './mcp-session.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How a held action was decided, for the tool's answer: "approved (note: …)". */
export type Decided = { approval: Approval | undefined };

/**
 * How often a waiting call repeats its progress: a client that resets its timeout on progress
 * (the SDK's resetTimeoutOnProgress) then waits as long as the person takes.
 */
const PROGRESS_EVERY_MS = 15_000;

/**
 * Tells the client that a call waits for a person (a log message, and progress when the client
 * asked for it), so a model or a person at the client knows why the call takes long. Returns
 * the function that stops the repeated progress.
 */
function announce(extra: ToolExtra, approval: Approval): () => void {
  const message =
    `held for approval ${approval.id} (${approval.reason}): waiting for a person to approve or ` +
    `deny it in the Benchtop window or with POST /approvals/${approval.id}/approve or /deny`;
  // A client that went away cannot be told; the action still waits for its decision.
  const send = (notification: ServerNotification) =>
    extra.sendNotification(notification).catch(() => {});
  void send({
    method: 'notifications/message',
    params: { level: 'warning', logger: 'benchtop', data: message },
  });
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => {};
  let progress = 0;
  const tell = () =>
    void send({
      method: 'notifications/progress',
      params: { progressToken: token, progress: progress++, message },
    });
  tell();
  const timer = setInterval(tell, PROGRESS_EVERY_MS);
  return () => clearInterval(timer);
}

/**
 * Watches for approvals asked on the session's behalf while `work` runs: the same action runner
 * the REST routes use holds the action and waits; this only reports the wait and its outcome.
 */
export async function whileWatchingApprovals<T extends object>(
  session: McpSession,
  computerId: string,
  extra: ToolExtra,
  work: () => Promise<T>,
): Promise<T & Decided> {
  let asked: Approval | undefined;
  let quiet = () => {};
  const stop = session.core.approvals.onAsked((org, approval) => {
    if (org !== session.org || approval.computer_id !== computerId || approval.task_id) return;
    asked = approval;
    quiet();
    quiet = announce(extra, approval);
  });
  try {
    const outcome = await work();
    const approval = asked && session.core.approvals.get(session.org, asked.id);
    return { ...outcome, approval };
  } finally {
    stop();
    quiet();
  }
}

/** Performs one action on the current computer through the REST routes' core path. */
export async function act(
  session: McpSession,
  action: ComputerAction,
  extra: ToolExtra,
): Promise<ActionResult & Decided> {
  const id = session.computerId();
  return whileWatchingApprovals(session, id, extra, () =>
    session.core.computers.act(session.org, id, action, {
      signal: extra.signal,
      requester: session.requester(),
    }),
  );
}

/** "Approved by a person (note: …). " before an answer whose action was held. */
export function decisionPrefix({ approval }: Decided): string {
  if (!approval || approval.status !== 'approved') return '';
  return `Approved by a person${approval.note ? ` (note: ${approval.note})` : ''}. `;
}
