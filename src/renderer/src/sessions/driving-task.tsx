import type { Task } from '../../../shared/tasks.js';
import { href } from '../hooks/use-hash-route.js';
import { pausedWhy, TaskStatusBadge } from '../tasks/task-status-badge.js';

/**
 * The agent task driving a computer, as a line right under the computer's row: a task started
 * from an SDK shows up here even though nobody started it in this window. It spans the whole
 * table so a long instruction gets the room the narrow columns above cannot give it.
 */
export function DrivingTaskRow({ task, columns }: { task: Task; columns: number }) {
  return (
    <tr className="driven-by">
      <td colSpan={columns}>
        <div className="driven-by-line">
          <span className="driven-by-label">Driven by agent task</span>
          <TaskStatusBadge task={task} />
          {/* Always there (empty unless paused), so the instruction keeps its column. */}
          <span className="driven-by-reason">{pausedWhy(task)}</span>
          <a
            className="driven-by-instruction"
            href={href.task(task.task_id)}
            title={task.instruction}
          >
            {task.instruction}
          </a>
        </div>
      </td>
    </tr>
  );
}
