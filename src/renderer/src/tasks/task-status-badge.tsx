import { PAUSED_WORDS } from '../../../shared/describe-attention.js';
import type { Task } from '../../../shared/tasks.js';

/** The task's status; a paused one says why on hover. */
export function TaskStatusBadge({ task }: { task: Task }) {
  const why = pausedWhy(task);
  return (
    <span className={`status status-${task.status}`} title={why ? `paused ${why}` : undefined}>
      {task.status}
    </span>
  );
}

/** Why a paused task is paused, after "paused": "by Python SDK … (key …)", "waiting for …". */
export function pausedWhy({ status, paused_reason: reason, paused_by: by }: Task): string | null {
  if (status !== 'paused' || !reason) return null;
  return reason === 'user' ? `by ${by ?? 'a person'}` : PAUSED_WORDS[reason];
}
