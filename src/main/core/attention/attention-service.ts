import type { Approval, AttentionItem } from '../../../shared/approvals.js';
import type { RanAction } from '../../../shared/describe-action.js';
import { describeHeldAction } from '../../../shared/describe-attention.js';
import type { Task, TaskEvent } from '../../../shared/tasks.js';
import { invalidRequest } from '../errors.js';
import type { AttentionDismissals } from './dismissals.js';

/** Failed tasks stay in the queue this long: a person sees them the next time they look. */
export const FAILED_VISIBLE_MS = 24 * 60 * 60 * 1000;
const FAILED_LISTED = 50;

type TaskReader = {
  /** Throws not_found for a task the organization does not have. */
  get(org: string, id: string): Task;
  list(org: string, filter: { statuses: Task['status'][]; limit?: number }): Task[];
  lastEvent(org: string, id: string, types: readonly string[]): TaskEvent | undefined;
};
type ApprovalReader = { list(org: string, query: { status: 'pending' }): Approval[] };

export type AttentionListener = (org: string, item: AttentionItem) => void;

/** Task events that put a task in front of a person, and the attention type each makes. */
const TASK_ITEMS = {
  handoff_requested: 'handoff',
  stalled: 'stalled',
  budget_reached: 'budget',
  failed: 'failed',
} as const;
const TASK_ITEM_TYPES = Object.keys(TASK_ITEMS);

/**
 * What waits for a person (docs/API.md §14), derived from what is stored: pending approvals,
 * tasks paused for a handoff, a stall or a budget, and tasks that failed in the last day and
 * that nobody dismissed. New items are announced to subscribers (the window's notifications, the
 * webhook) as they happen.
 */
export class AttentionService {
  private readonly listeners = new Set<AttentionListener>();

  constructor(
    private readonly deps: {
      approvals: ApprovalReader;
      tasks: TaskReader;
      dismissals: AttentionDismissals;
      clock?: () => number;
    },
  ) {}

  /** Oldest first. */
  list(org: string): AttentionItem[] {
    const items = [
      ...this.deps.approvals.list(org, { status: 'pending' }).map(approvalItem),
      ...this.pausedTasks(org),
      ...this.failedTasks(org),
    ];
    return items.sort((a, b) => a.since.localeCompare(b.since));
  }

  /**
   * Takes a failed task out of the queue (a person has seen it). Other items leave when acted on:
   * an approval decided, a paused task resumed or cancelled.
   */
  dismiss(org: string, taskId: string): void {
    const task = this.deps.tasks.get(org, taskId);
    if (task.status !== 'failed') {
      throw invalidRequest(
        `task ${taskId} is ${task.status}: only a failed task is dismissed from the queue (decide an approval, resume or cancel a paused task)`,
        'task_id',
      );
    }
    const now = this.now();
    this.deps.dismissals.add(org, taskId, new Date(now).toISOString());
    this.deps.dismissals.forget(new Date(now - FAILED_VISIBLE_MS).toISOString());
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  subscribe(listener: AttentionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An approval was asked for. */
  approvalAsked(org: string, approval: Approval): void {
    this.announce(org, approvalItem(approval));
  }

  /** A task's event: those that need a person are announced. */
  taskEvent(org: string, computerId: string, event: TaskEvent): void {
    const item = taskItem(computerId, event);
    if (item) this.announce(org, item);
  }

  private announce(org: string, item: AttentionItem): void {
    for (const listener of this.listeners) {
      try {
        listener(org, item);
      } catch {
        // A listener's failure is its own; the others still hear of the item.
      }
    }
  }

  private pausedTasks(org: string): AttentionItem[] {
    return this.deps.tasks
      .list(org, { statuses: ['paused'] })
      .filter((task) => ['handoff', 'stalled', 'budget'].includes(task.paused_reason ?? ''))
      .flatMap((task) => {
        const event = this.deps.tasks.lastEvent(org, task.task_id, TASK_ITEM_TYPES);
        const item = event && taskItem(task.computer_id, event);
        return item ? [item] : [];
      });
  }

  private failedTasks(org: string): AttentionItem[] {
    const since = new Date(this.now() - FAILED_VISIBLE_MS).toISOString();
    const dismissed = this.deps.dismissals.of(org);
    return this.deps.tasks
      .list(org, { statuses: ['failed'], limit: FAILED_LISTED })
      .filter((task) => task.updated_at >= since && !dismissed.has(task.task_id))
      .map((task) => ({
        type: 'failed' as const,
        since: task.updated_at,
        task_id: task.task_id,
        computer_id: task.computer_id,
        summary: `task failed: ${task.error ?? 'no reason given'}`,
      }));
  }
}

function approvalItem(approval: Approval): AttentionItem {
  const action = describeHeldAction(approval.action as RanAction);
  const where = approval.url ? ` on ${approval.url}` : '';
  const from = approval.requested_by ? ` from ${approval.requested_by}` : '';
  return {
    type: 'approval',
    since: approval.created_at,
    task_id: approval.task_id,
    computer_id: approval.computer_id,
    approval_id: approval.id,
    summary: `${action}${where}${from} — ${approval.reason}`,
  };
}

function taskItem(computerId: string, event: TaskEvent): AttentionItem | undefined {
  if (!(event.type in TASK_ITEMS)) return undefined;
  const base = { since: event.timestamp, task_id: event.task_id, computer_id: computerId };
  switch (event.type) {
    case 'handoff_requested':
      return { type: 'handoff', ...base, summary: `the agent asks for a person: ${event.reason}` };
    case 'stalled':
      return { type: 'stalled', ...base, summary: `stalled (${event.reason}): ${event.detail}` };
    case 'budget_reached':
      return {
        type: 'budget',
        ...base,
        summary: `budget ${event.budget} reached: ${event.used} of ${event.limit}`,
      };
    case 'failed':
      return { type: 'failed', ...base, summary: `task failed: ${event.error}` };
    default:
      return undefined;
  }
}
