import type { ApprovalTarget, AttentionItem } from './approvals.js';
import { describeRanAction, type RanAction } from './describe-action.js';
import type { PausedReason, StallKind } from './tasks.js';

/** How what waits for a person reads: in the window's queue and in an OS notification. */

const HEADINGS: Record<AttentionItem['type'], string> = {
  approval: 'An action waits for your approval',
  handoff: 'A task asks for you',
  stalled: 'A task is stuck',
  budget: 'A task reached its budget',
  failed: 'A task failed',
};

export function attentionHeading(item: AttentionItem): string {
  return HEADINGS[item.type];
}

/** An OS notification for an item: its heading, and the summary with where it happens. */
export function attentionNotice(item: AttentionItem): { title: string; body: string } {
  const where = item.task_id ?? item.computer_id;
  return {
    title: attentionHeading(item),
    body: where ? `${item.summary} (${where})` : item.summary,
  };
}

/** One identity per item, stable across polls: a new identity is a new item. */
export function attentionKey(item: AttentionItem): string {
  return [
    item.type,
    item.approval_id ?? '',
    item.task_id ?? '',
    item.computer_id ?? '',
    item.since,
  ].join('|');
}

/** Why a task is paused, the same in the window and in a task bundle's viewer. */
export const PAUSED_WORDS: Record<PausedReason, string> = {
  user: 'paused by a person',
  takeover: 'a person took over the computer',
  approval: 'waiting for a person to approve an action',
  handoff: 'the model asked for a person',
  stalled: 'stalled: its actions changed nothing',
  budget: 'a budget was reached',
};

/** What a stall of each kind is. */
export const STALL_WORDS: Record<StallKind, string> = {
  no_change: 'three actions in a row changed nothing on screen',
  repeating: 'the same action three times',
  oscillating: 'two screens alternating',
};

/** A task waiting out a rate limit: "OpenAI answered HTTP 429: …; trying again in 2 s (try 2 of 3)". */
export function describeModelRetry(retry: {
  error: string;
  wait_ms: number;
  attempt: number;
  attempts: number;
}): string {
  return `${retry.error}; trying again in ${durationText(retry.wait_ms)} (try ${retry.attempt} of ${retry.attempts})`;
}

/** "30 ms", "1.2 s", "120 s". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${ms < 10_000 ? Number((ms / 1000).toFixed(1)) : Math.round(ms / 1000)} s`;
}

/**
 * A held action as a person reads it: "click at 150, 130", "run “rm -rf /tmp/x”". A shell
 * command is held as exec or exec_sync with its command line; debug carries it in `command`.
 */
export function describeHeldAction(action: RanAction): string {
  const { command } = action;
  const line =
    typeof command === 'string'
      ? command
      : action.type === 'debug' && typeof (command as { command?: unknown })?.command === 'string'
        ? (command as { command: string }).command
        : undefined;
  return line === undefined ? describeRanAction(action) : `run “${line}”`;
}

/** The element an action aims at: "button “Pay now”", "password input", "link to https://…". */
export function describeTarget(target: ApprovalTarget): string {
  const kind =
    target.input_type && target.input_type !== 'text'
      ? `${target.input_type} input`
      : (target.role ?? target.tag ?? 'element');
  const name = target.name ? ` “${target.name}”` : '';
  const link = target.href ? ` to ${target.href}` : '';
  return `${kind}${name}${link}`;
}

/** What a person is asked about: "click at 100, 60 on button “Pay now”: Paying needs a person". */
export function describeAsked(asked: {
  action: RanAction;
  target: ApprovalTarget | null;
  reason: string;
}): string {
  const target = asked.target ? ` on ${describeTarget(asked.target)}` : '';
  return `${describeHeldAction(asked.action)}${target}: ${asked.reason}`;
}
