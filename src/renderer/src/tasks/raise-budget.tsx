import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { BudgetName, Budgets, Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { queryKeys } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText } from '../components/feedback.js';
import { BUDGET_LABELS } from '../../../shared/describe-task-event.js';
import { reachedBudget } from './budgets.js';

/**
 * The budget the task reached, raised by the person, and the task resumed with it (resuming
 * without raising it is refused). `onResumed` runs once the task goes on.
 */
export function RaiseBudget({ task, onResumed }: { task: Task; onResumed?: () => void }) {
  const api = useApi();
  const resume = useMutation({
    mutationFn: (budgets: Budgets) =>
      api.call('tasks.resume', { params: { id: task.task_id }, body: { budgets } }),
    onSuccess: onResumed,
    meta: { invalidates: [queryKeys.tasks, queryKeys.attention] },
  });
  const reached = reachedBudget(task);
  const limit = task.budgets[reached];
  const [value, setValue] = useState(() => String(limit === null ? '' : suggestion(limit)));
  const [error, setError] = useState<string>();
  const number = Number(value);
  const valid = value.trim() !== '' && Number.isFinite(number) && number > 0;
  return (
    <>
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
        onClick={() => resume.mutateAsync({ [reached]: number } as Record<BudgetName, number>)}
        onError={setError}
      >
        Raise and resume
      </AsyncButton>
      <ErrorText message={error} />
    </>
  );
}

/** Twice the old limit: room for as much again. */
function suggestion(limit: number): number {
  return Math.round(limit * 2 * 100) / 100;
}
