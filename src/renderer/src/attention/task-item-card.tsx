import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { AttentionItem } from '../../../shared/approvals.js';
import type { BudgetName, Budgets, Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { queryKeys, taskQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';
import { BUDGET_LABELS, reachedBudget } from '../tasks/budgets.js';
import { ItemHead } from './item-head.js';

/**
 * A task that waits for a person: handed off, stuck, out of budget (Resume), or failed (a link,
 * and Dismiss once seen).
 */
export function TaskItemCard({ item }: { item: AttentionItem }) {
  return (
    <article className={`attention-item attention-${item.type}`} aria-label={item.summary}>
      <ItemHead item={item} />
      <p className="attention-summary">{item.summary}</p>
      {item.task_id && item.type === 'failed' && <FailedControls taskId={item.task_id} />}
      {item.task_id && item.type !== 'failed' && (
        <ResumeControls taskId={item.task_id} raiseBudget={item.type === 'budget'} />
      )}
    </article>
  );
}

function FailedControls({ taskId }: { taskId: string }) {
  const api = useApi();
  const [error, setError] = useState<string>();
  const dismiss = useMutation({
    mutationFn: () => api.call('attention.dismiss', { body: { task_id: taskId } }),
    meta: { invalidates: [queryKeys.attention] },
  });
  return (
    <div className="controls">
      <a href={href.task(taskId)}>Open the task</a>
      <AsyncButton
        className="secondary"
        aria-label={`Dismiss ${taskId}`}
        onClick={() => dismiss.mutateAsync()}
        onError={setError}
      >
        Dismiss
      </AsyncButton>
      <ErrorText message={error} />
    </div>
  );
}

function ResumeControls({ taskId, raiseBudget }: { taskId: string; raiseBudget: boolean }) {
  const api = useApi();
  const task = useQuery({ ...taskQuery(api, taskId), enabled: raiseBudget });
  const [error, setError] = useState<string>();
  const resume = useMutation({
    mutationFn: (budgets: Budgets | undefined) =>
      api.call('tasks.resume', { params: { id: taskId }, body: budgets ? { budgets } : {} }),
    meta: { invalidates: [queryKeys.attention, queryKeys.tasks] },
  });
  if (raiseBudget && task.data) {
    return <RaiseBudget task={task.data} onResume={resume.mutateAsync} />;
  }
  return (
    <div className="controls">
      <AsyncButton onClick={() => resume.mutateAsync(undefined)} onError={setError}>
        Resume
      </AsyncButton>
      <a href={href.task(taskId)}>Open the task</a>
      <ErrorText message={error} />
    </div>
  );
}

/** The budget the task reached, raised by the person before it resumes. */
function RaiseBudget({
  task,
  onResume,
}: {
  task: Task;
  onResume: (b: Budgets) => Promise<unknown>;
}) {
  const reached = reachedBudget(task);
  const limit = task.budgets[reached];
  const [value, setValue] = useState(() => String(limit === null ? '' : suggestion(limit)));
  const [error, setError] = useState<string>();
  const number = Number(value);
  const valid = value.trim() !== '' && Number.isFinite(number) && number > 0;
  return (
    <div className="controls">
      <label>
        {BUDGET_LABELS[reached]} (was {limit === null ? 'unset' : limit.toLocaleString('en-US')})
        <input
          type="number"
          min={0}
          step="any"
          value={value}
          onChange={(event) => setValue(event.target.value)}
        />
      </label>
      <AsyncButton
        disabled={!valid}
        onClick={() => onResume({ [reached]: number } as Record<BudgetName, number>)}
        onError={setError}
      >
        Raise and resume
      </AsyncButton>
      <a href={href.task(task.task_id)}>Open the task</a>
      <ErrorText message={error} />
    </div>
  );
}

/** Twice the old limit: room for as much again. */
function suggestion(limit: number): number {
  return Math.round(limit * 2 * 100) / 100;
}
