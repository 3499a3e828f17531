import { useQuery } from '@tanstack/react-query';
import { DEFAULT_TASK_LIST_LIMIT, MAX_TASK_LIST_LIMIT, type Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { LIVE_STATUSES, taskListQuery } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { ShowOlder, useNewest } from '../components/show-older.js';
import { localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { liveFirst } from './live-tasks.js';
import { StartTaskForm } from './start-task-form.js';
import { TaskDetail } from './task-detail.js';
import { TaskStatusBadge } from './task-status-badge.js';

const COLUMNS = ['Task', 'Status', 'Exit code', 'Instruction', 'Model', 'Steps', 'Started'];

export function TasksScreen({ taskId }: { taskId?: string }) {
  if (taskId) return <TaskDetail key={taskId} taskId={taskId} />;
  return <TaskList />;
}

/**
 * Every live task, however many newer ones there are (they are what a person may act on), and
 * the newest of the rest, older ones on request.
 */
function TaskList() {
  const api = useApi();
  const { shown, older } = useNewest(DEFAULT_TASK_LIST_LIMIT, MAX_TASK_LIST_LIMIT);
  const live = useQuery(taskListQuery(api, { status: LIVE_STATUSES, limit: MAX_TASK_LIST_LIMIT }));
  // Asked for more, the table keeps what it shows until they come.
  const recent = useQuery({
    ...taskListQuery(api, { limit: shown }),
    placeholderData: (previous) => previous,
  });
  const loaded = live.data && recent.data;
  return (
    <section aria-labelledby="tasks-title">
      <header className="screen-head">
        <h1 id="tasks-title">Tasks</h1>
      </header>
      <StartTaskForm />
      <h2>All tasks</h2>
      <ErrorText message={firstError(live.error, recent.error)} />
      {!loaded ? (
        <Spinner label="loading tasks" />
      ) : live.data.length + recent.data.length === 0 ? (
        <p className="muted">No task yet. Start one above.</p>
      ) : (
        <>
          <TaskTable tasks={unique([...live.data, ...recent.data])} />
          <ShowOlder shown={shown} noun="tasks" onOlder={older(recent.data.length)} />
        </>
      )}
    </section>
  );
}

const unique = (tasks: Task[]): Task[] => [
  ...new Map(tasks.map((task) => [task.task_id, task])).values(),
];

/** One table, so the columns line up, with the tasks a person may still act on above the rest. */
function TaskTable({ tasks }: { tasks: Task[] }) {
  const { live, finished } = liveFirst(tasks);
  return (
    <table className="table task-table">
      <thead>
        <tr>
          {COLUMNS.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <TaskGroup title="Live" tasks={live} empty="No task is running or paused." />
      {finished.length > 0 && <TaskGroup title="Finished" tasks={finished} />}
    </table>
  );
}

function TaskGroup({ title, tasks, empty }: { title: string; tasks: Task[]; empty?: string }) {
  const span = COLUMNS.length;
  return (
    <tbody>
      <tr className="group-row">
        <th colSpan={span} scope="colgroup">
          {title} <span className="group-count">{tasks.length}</span>
        </th>
      </tr>
      {tasks.length === 0 && (
        <tr>
          <td colSpan={span} className="muted">
            {empty}
          </td>
        </tr>
      )}
      {tasks.map((task) => (
        <TaskRow key={task.task_id} task={task} />
      ))}
    </tbody>
  );
}

function TaskRow({ task }: { task: Task }) {
  return (
    <tr data-task-id={task.task_id}>
      <td>
        <a href={href.task(task.task_id)}>{task.task_id}</a>
      </td>
      <td>
        <TaskStatusBadge task={task} />
      </td>
      <td>{task.exit_code ?? '—'}</td>
      <td className="ellipsis" title={task.instruction}>
        {task.instruction}
      </td>
      <td>{task.model}</td>
      <td>
        {task.steps}/{task.max_steps}
      </td>
      <td className="no-wrap">{localTime(task.created_at)}</td>
    </tr>
  );
}
