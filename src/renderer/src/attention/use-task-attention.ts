import { useMutation, useQuery } from '@tanstack/react-query';
import type { Approval, AttentionItem } from '../../../shared/approvals.js';
import { PAUSED_WORDS } from '../../../shared/describe-attention.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { attentionQuery, pendingApprovalsQuery, queryKeys } from '../api/queries.js';

export type Held = {
  item: AttentionItem & { approval_id: string };
  /** The pending approval the item stands for; undefined until the list of approvals has it. */
  approval: Approval | undefined;
};

/** Whose held actions: one task's, or those a computer's API and MCP clients sent (no task). */
export type HeldOwner = { taskId: string } | { clientsOf: string };

/** The actions of one task (or of a computer's clients) held for a person's decision, oldest first. */
export function useHeldApprovals(owner: HeldOwner): { held: Held[]; error: string | undefined } {
  const api = useApi();
  const attention = useQuery(attentionQuery(api));
  const owns = (item: AttentionItem) =>
    'taskId' in owner
      ? item.task_id === owner.taskId
      : item.task_id === null && item.computer_id === owner.clientsOf;
  const items = (attention.data ?? []).filter(
    (item): item is Held['item'] => item.type === 'approval' && !!item.approval_id && owns(item),
  );
  const approvals = useQuery({ ...pendingApprovalsQuery(api), enabled: items.length > 0 });
  return {
    held: items.map((item) => ({
      item,
      approval: approvals.data?.find((approval) => approval.id === item.approval_id),
    })),
    error: firstError(approvals.error),
  };
}

/**
 * Why a paused task waits, in words: what the queue says of it (the model's own reason for a
 * handoff, what a stall saw, how much of which budget), else why it paused. The held action of
 * one waiting for an approval is told apart by its own controls, so that one says only this.
 */
export function usePausedWhy(task: Task): string | undefined {
  const attention = useQuery(attentionQuery(useApi()));
  const reason = task.status === 'paused' ? task.paused_reason : null;
  if (!reason) return undefined;
  const item = attention.data?.find(
    (each) => each.task_id === task.task_id && each.type === reason,
  );
  const why = reason !== 'approval' && item ? item.summary : PAUSED_WORDS[reason];
  return why.replace(/[.\s]+$/, '');
}

/** Approves or denies one held action (a note goes with either); onDecided gets the answer. */
export function useDecision(approvalId: string, onDecided?: (answer: Approval) => void) {
  const api = useApi();
  return useMutation({
    mutationFn: ({ verb, note }: { verb: 'approve' | 'deny'; note?: string }) =>
      api.call(`approvals.${verb}`, {
        params: { id: approvalId },
        body: note?.trim() ? { note: note.trim() } : {},
      }),
    onSuccess: onDecided,
    meta: { invalidates: [queryKeys.attention, queryKeys.pendingApprovals, queryKeys.tasks] },
  }).mutateAsync;
}
