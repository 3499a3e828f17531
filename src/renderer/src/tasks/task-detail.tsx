import { useEffect, useState, type FormEvent } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/client.js';
import { AsyncButton } from '../components/async-button.js';
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

  const computers = usePolling(() => api.get<Computer[]>('/computers'), 5000);
  const current = task.data;
  const firstShot = events.find((event) => event.type === 'screenshot');
  const showShots =
    !!current &&
    screenshotsKept(
      current,
      !!computers.data?.some((computer) => computer.id === current.computer_id),
      firstShot?.type === 'screenshot' ? firstShot.screenshot_url : undefined,
      api.connection.baseUrl,
      Date.now(),
    );
  const control = (verb: 'pause' | 'resume' | 'cancel') => async () => {
    await api.post(`/agent/tasks/${taskId}/${verb}`);
    await reload();
  };
  const live = current?.status === 'running' || current?.status === 'paused';

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
      {current && (
        <div className="panel task-facts">
          <p className="instruction">{current.instruction}</p>
          <p className="muted">
            Started {localTime(current.created_at)} on{' '}
            <a href={href.computer(current.computer_id)}>{current.computer_id}</a>
            {live && ' (watch it live)'}
          </p>
          {current.result && <p className="result">Result: {current.result}</p>}
          {current.error && <p className="error">Failed: {current.error}</p>}
          {live && (
            <div className="controls">
              {current.status === 'running' && (
                <AsyncButton onClick={control('pause')} onError={setError}>
                  Pause
                </AsyncButton>
              )}
              {current.status === 'paused' && (
                <AsyncButton onClick={control('resume')} onError={setError}>
                  Resume
                </AsyncButton>
              )}
              <AsyncButton className="danger" onClick={control('cancel')} onError={setError}>
                Cancel
              </AsyncButton>
              <MessageForm taskId={taskId} />
            </div>
          )}
        </div>
      )}
      <h2>Timeline</h2>
      <TaskTimeline events={events} showScreenshots={showShots} />
    </section>
  );
}

/** A message the model reads at its next step (also while the task is paused). */
function MessageForm({ taskId }: { taskId: string }) {
  const api = useApi();
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.post(`/agent/tasks/${taskId}/messages`, { message });
      setMessage('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
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
