import { useEffect, useState, type FormEvent } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { Task, TaskEvent } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { AsyncButton } from '../components/async-button.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { usePolling } from '../hooks/use-polling.js';
import { TaskStatusBadge } from './task-status-badge.js';
import { screenshotsKept } from './screenshots-kept.js';
import { TaskTimeline } from './task-timeline.js';
import { useTaskEvents } from './use-task-events.js';

/** One task: its status and exit code, the controls, and the timeline of its steps. */
export function TaskDetail({ taskId }: { taskId: string }) {
  const api = useApi();
  const task = usePolling(() => api.get<Task>(`/agent/tasks/${taskId}`), 1500);
  const { events, error: streamError } = useTaskEvents(taskId);
  const [error, setError] = useState<string>();
  const reload = task.reload;
  const last = events.at(-1)?.type;
  // Control events change the status: show it at once instead of at the next poll.
  useEffect(() => void reload(), [reload, last]);
  const showShots = useScreenshotsKept(task.data, events);
  const current = task.data;
  const control = async (verb: 'pause' | 'resume' | 'cancel') => {
    await api.post(`/agent/tasks/${taskId}/${verb}`);
    await reload();
  };

  return (
    <section aria-labelledby="task-title">
      <header className="screen-head">
        <a href={href.tasks}>← Tasks</a>
        <h1 id="task-title">{taskId}</h1>
        {current && <TaskStatusBadge status={current.status} />}
        {current && (
          <span className="facts">
            <span>exit code {current.exit_code ?? '—'}</span>
            <span>
              step {current.steps}/{current.max_steps}
            </span>
            <span>{current.model}</span>
          </span>
        )}
      </header>
      <ErrorText message={error ?? task.error ?? streamError} />
      {!current && !task.error && <Spinner label="loading the task" />}
      {current && <TaskFacts task={current} onControl={control} onError={setError} />}
      <h2>Timeline</h2>
      <TaskTimeline events={events} showScreenshots={showShots} />
    </section>
  );
}

type FactsProps = {
  task: Task;
  onControl: (verb: 'pause' | 'resume' | 'cancel') => Promise<void>;
  onError: (message: string | undefined) => void;
};

function TaskFacts({ task, onControl, onError }: FactsProps) {
  const live = task.status === 'running' || task.status === 'paused';
  return (
    <div className="panel task-facts">
      <p className="instruction">{task.instruction}</p>
      <p className="muted">
        Started {localTime(task.created_at)} on{' '}
        <a href={href.computer(task.computer_id)}>{task.computer_id}</a>
        {live && ' (watch it live)'}
      </p>
      {task.result && <p className="result">Result: {task.result}</p>}
      {task.error && <p className="error">Failed: {task.error}</p>}
      {live && (
        <div className="controls">
          {task.status === 'running' && (
            <AsyncButton onClick={() => onControl('pause')} onError={onError}>
              Pause
            </AsyncButton>
          )}
          {task.status === 'paused' && (
            <AsyncButton onClick={() => onControl('resume')} onError={onError}>
              Resume
            </AsyncButton>
          )}
          <AsyncButton className="danger" onClick={() => onControl('cancel')} onError={onError}>
            Cancel
          </AsyncButton>
          <MessageForm taskId={task.task_id} />
        </div>
      )}
    </div>
  );
}

/** Whether the task's screenshots can still be shown (see screenshotsKept). */
function useScreenshotsKept(task: Task | undefined, events: TaskEvent[]): boolean {
  const api = useApi();
  const computers = usePolling(() => api.get<Computer[]>('/computers'), 5000);
  if (!task) return false;
  const shot = events.find((event) => event.type === 'screenshot');
  return screenshotsKept(
    task,
    !!computers.data?.some((computer) => computer.id === task.computer_id),
    shot?.type === 'screenshot' ? shot.screenshot_url : undefined,
    api.connection.baseUrl,
    Date.now(),
  );
}

/** A message the model reads at its next step (also while the task is paused). */
function MessageForm({ taskId }: { taskId: string }) {
  const api = useApi();
  const [message, setMessage] = useState('');
  const { busy, error, run } = useApiAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    return run(async () => {
      await api.post(`/agent/tasks/${taskId}/messages`, { message });
      setMessage('');
    });
  };
  return (
    <form className="message-form" onSubmit={(event) => void submit(event)}>
      <label>
        Message to the model
        <input type="text" value={message} onChange={(event) => setMessage(event.target.value)} />
      </label>
      <button type="submit" disabled={busy || !message.trim()}>
        Send {busy && <Spinner label="sending" />}
      </button>
      <ErrorText message={error} />
    </form>
  );
}
