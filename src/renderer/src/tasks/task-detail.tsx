import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import type { Task, TaskEvent } from '../../../shared/tasks.js';
import { useApi, useConnection } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { computersQuery, LIVE_STATUSES, queryKeys, taskQuery, usageQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { clock, localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { usePausedWhy } from '../attention/use-task-attention.js';
import { BundleButton } from '../recordings/downloads.js';
import { useVideoSync } from '../recordings/recording-video.js';
import { TaskVideo, useTaskRecording } from '../recordings/task-video.js';
import { dollars } from '../../../shared/describe-task-event.js';
import { TaskStatusBadge } from './task-status-badge.js';
import { screenshotsKept } from './screenshots-kept.js';
import { RaiseBudget } from './raise-budget.js';
import { ReplayControls } from './replay-controls.js';
import { TaskApprovals } from './task-approvals.js';
import { TaskTimeline } from './task-timeline.js';
import { useTaskEvents } from './use-task-events.js';
import { CostCell } from '../usage/usage-screen.js';
import { totalsBy } from '../usage/usage-totals.js';

/** One task: its status and exit code, the controls, and the timeline of its steps. */
export function TaskDetail({ taskId }: { taskId: string }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const task = useQuery(taskQuery(api, taskId));
  const { events, error: streamError } = useTaskEvents(taskId);
  const [error, setError] = useState<string>();
  const last = events.at(-1)?.type;
  // Control events change the status (and what waits for a person): show it at once instead of
  // at the next poll.
  useEffect(() => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.task(taskId) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.attention });
  }, [queryClient, taskId, last]);
  const showShots = useScreenshotsKept(task.data, events);
  const current = task.data;
  const recording = useTaskRecording(current);
  const sync = useVideoSync();
  // Cancelling a task on a computer it created ends that computer.
  const control = useMutation({
    mutationFn: (verb: 'pause' | 'resume' | 'cancel') =>
      api.call(`tasks.${verb}`, { params: { id: taskId } }),
    meta: { invalidates: [queryKeys.tasks, queryKeys.computers] },
  });

  return (
    <section aria-labelledby="task-title">
      <header className="screen-head">
        <a href={href.tasks}>← Tasks</a>
        <h1 id="task-title">{taskId}</h1>
        {current && <TaskStatusBadge task={current} />}
        {current && (
          <span className="facts">
            <span>exit code {current.exit_code ?? '—'}</span>
            <span>
              step {current.steps}/{current.max_steps}
            </span>
            <span>{current.model}</span>
          </span>
        )}
        <span className="head-actions">
          {current && <ReplayControls task={current} onError={setError} />}
          <BundleButton taskId={taskId} label="Download bundle" onError={setError} />
        </span>
      </header>
      <ErrorText message={error ?? firstError(task.error) ?? streamError} />
      {!current && !task.error && <Spinner label="loading the task" />}
      {current && <TaskFacts task={current} onControl={control.mutateAsync} onError={setError} />}
      {current && LIVE_STATUSES.includes(current.status) && <TaskApprovals taskId={taskId} />}
      <div className={recording ? 'task-body with-video' : 'task-body'}>
        <div>
          <h2>Timeline</h2>
          <TaskTimeline
            events={events}
            showScreenshots={showShots}
            video={
              recording?.started_at
                ? {
                    startedAt: Date.parse(recording.started_at),
                    positionMs: sync.positionMs,
                    seek: sync.seek,
                  }
                : undefined
            }
          />
        </div>
        {recording && (
          <TaskVideo
            recording={recording}
            sync={sync}
            taskOver={!!current && !LIVE_STATUSES.includes(current.status)}
          />
        )}
      </div>
    </section>
  );
}

type FactsProps = {
  task: Task;
  onControl: (verb: 'pause' | 'resume' | 'cancel') => Promise<unknown>;
  onError: (message: string | undefined) => void;
};

function TaskFacts({ task, onControl, onError }: FactsProps) {
  const paused = task.status === 'paused' ? task.paused_reason : undefined;
  const why = usePausedWhy(task);
  const live = task.status === 'running' || task.status === 'paused';
  return (
    <div className="panel task-facts">
      <p className="instruction">{task.instruction}</p>
      <p className="muted">
        Started {localTime(task.created_at)} on{' '}
        <a href={href.computer(task.computer_id)}>{task.computer_id}</a>
        {live && ' (watch it live)'}
      </p>
      {task.replay_of && (
        <p className="muted">
          Replays <a href={href.task(task.replay_of)}>{task.replay_of}</a> without the model
        </p>
      )}
      {why && (
        <p className="paused-reason">
          {paused === 'user' && task.paused_by ? `Paused by ${task.paused_by}.` : `Paused: ${why}.`}
        </p>
      )}
      <TaskUsage task={task} />
      {task.result && <p className="result">Result: {task.result}</p>}
      {task.error && <p className="error">Failed: {task.error}</p>}
      {live && (
        <div className="controls">
          {task.status === 'running' && (
            <AsyncButton onClick={() => onControl('pause')} onError={onError}>
              Pause
            </AsyncButton>
          )}
          {/* A held action goes on once decided (below); resuming cannot skip it, nor a
              budget still reached. */}
          {paused === 'budget' && <RaiseBudget task={task} />}
          {task.status === 'paused' && paused !== 'approval' && paused !== 'budget' && (
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

/**
 * What the task's model calls used, beside the budgets it pauses at; its ledger rows tell calls
 * without a price (whose cost is unknown) from free ones.
 */
function TaskUsage({ task }: { task: Task }) {
  const { usage, budgets } = task;
  const rows = useQuery(usageQuery(useApi(), { task_id: task.task_id })).data?.rows;
  const calls = rows ? totalsBy(rows, () => task.task_id)[0] : undefined;
  const tokens = usage.input_tokens + usage.output_tokens;
  const of = (limit: number | null, shown: (value: number) => string) =>
    limit === null ? '' : ` of ${shown(limit)}`;
  const count = (value: number) => value.toLocaleString('en-US');
  const limit = budgets.max_duration_seconds !== null && (
    <span>Runs at most {clock(budgets.max_duration_seconds)}</span>
  );
  const unlimited = budgets.max_tokens === null && budgets.max_cost_usd === null;
  if (rows?.length === 0 && tokens === 0 && unlimited) {
    return (
      <p className="usage">
        <span className="muted">
          No model call{task.replay_of ? ': a replay repeats the run without the model' : ' yet'}
        </span>
        {limit}
      </p>
    );
  }
  return (
    <p className="usage">
      <span>
        Tokens {count(tokens)}
        {of(budgets.max_tokens, count)}{' '}
        <span className="muted">
          ({count(usage.input_tokens)} in, {count(usage.cached_tokens)} of them cached,{' '}
          {count(usage.output_tokens)} out)
        </span>
      </span>
      <span className="task-cost">
        {/* Until the ledger's rows of its calls have come, a cost of 0 may be "no price". */}
        Cost{' '}
        {calls ? (
          <CostCell total={calls} />
        ) : usage.cost_usd > 0 ? (
          dollars(usage.cost_usd)
        ) : (
          <span className="muted">…</span>
        )}
        {of(budgets.max_cost_usd, dollars)}
        {calls && (
          <span className="muted">
            {' '}
            ({count(calls.calls)} model {calls.calls === 1 ? 'call' : 'calls'})
          </span>
        )}
      </span>
      {limit}
    </p>
  );
}

/** Whether the task's screenshots can still be shown (see screenshotsKept). */
function useScreenshotsKept(task: Task | undefined, events: TaskEvent[]): boolean {
  const api = useApi();
  const computers = useQuery({ ...computersQuery(api), refetchInterval: 5000 });
  if (!task) return false;
  const shot = events.find((event) => event.type === 'screenshot');
  return screenshotsKept(
    task,
    !!computers.data?.some((computer) => computer.id === task.computer_id),
    shot?.type === 'screenshot' ? shot.screenshot_url : undefined,
    useConnection().baseUrl,
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
      await api.call('tasks.message', { params: { id: taskId }, body: { message } });
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
