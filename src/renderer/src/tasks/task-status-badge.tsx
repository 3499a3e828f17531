import type { Task } from '../../../shared/tasks.js';

export function TaskStatusBadge({ status }: { status: Task['status'] }) {
  return <span className={`status status-${status}`}>{status}</span>;
}
