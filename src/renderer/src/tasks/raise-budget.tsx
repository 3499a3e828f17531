import { useState } from 'react';
import type { BudgetName, Budgets, Task } from '../../../shared/tasks.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText } from '../components/feedback.js';
import { BUDGET_LABELS, reachedBudget } from './budgets.js';

/**
 * The budget the task reached, raised by the person before it resumes (resuming without raising
 * it is refused).
 */
export function RaiseBudget({
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
        onClick={() => onResume({ [reached]: number } as Record<BudgetName, number>)}
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
