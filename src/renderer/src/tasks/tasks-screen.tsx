import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { usePolling } from '../hooks/use-polling.js';
import { StartTaskForm } from './start-task-form.js';
import { TaskDetail } from './task-detail.js';
import { TaskStatusBadge } from './task-status-badge.js';

export function TasksScreen({ taskId }: { taskId?: string }) {
  if (taskId) return <TaskDetail key={taskId} taskId={taskId} />;
  return <TaskList />;
}

function TaskList() {
  const api = useApi();
  const tasks = usePolling(() => api.get<Task[]>('/agent/tasks'), 2000);
  return (
    <section aria-labelledby="tasks-title">
      <header className="screen-head">
        <h1 id="tasks-title">Tasks</h1>
      </header>
      <StartTaskForm />
      <h2>All tasks</h2>
      <ErrorText message={tasks.error} />
      {tasks.data === undefined ? (
        <Spinner label="loading tasks" />
      ) : tasks.data.length === 0 ? (
        <p className="muted">No task yet. Start one above.</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Status</th>
              <th scope="col">Exit code</th>
              <th scope="col">Instruction</th>
              <th scope="col">Model</th>
              <th scope="col">Steps</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {tasks.data.map((task) => (
              <tr key={task.task_id} data-task-id={task.task_id}>
                <td>
                  <a href={href.task(task.task_id)}>{task.task_id}</a>
                </td>
                <td>
                  <TaskStatusBadge status={task.status} />
                </td>
                <td>{task.exit_code ?? '—'}</td>
                <td className="ellipsis" title={task.instruction}>
                  {task.instruction}
                </td>
                <td>{task.model}</td>
                <td>
                  {task.steps}/{task.max_steps}
                </td>
                <td>{localTime(task.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
