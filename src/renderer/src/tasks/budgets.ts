import type { BudgetName, Task } from '../../../shared/tasks.js';

/** What the task used of each budget it has; time used is not known from the task alone. */
export function budgetUse(task: Task): Record<BudgetName, number | undefined> {
  return {
    max_tokens: task.usage.input_tokens + task.usage.output_tokens,
    max_cost_usd: task.usage.cost_usd,
    max_duration_seconds: undefined,
  };
}

/**
 * Which budget a task paused at: one whose use reached its limit, or else its time budget (the one
 * use the task does not report).
 */
export function reachedBudget(task: Task): BudgetName {
  const used = budgetUse(task);
  if (task.budgets.max_tokens !== null && used.max_tokens! >= task.budgets.max_tokens)
    return 'max_tokens';
  if (task.budgets.max_cost_usd !== null && used.max_cost_usd! >= task.budgets.max_cost_usd)
    return 'max_cost_usd';
  return 'max_duration_seconds';
}
