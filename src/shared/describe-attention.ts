import type { ApprovalTarget, AttentionItem } from './approvals.js';
import { describeRanAction, type RanAction } from './describe-action.js';

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

/** A held action as a person reads it: "click at 150, 130", "run `rm -rf /tmp/x`". */
export function describeHeldAction(action: RanAction): string {
  if ((action.type === 'exec' || action.type === 'debug') && typeof action.command === 'string')
    return `run “${action.command}”`;
  return describeRanAction(action);
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
