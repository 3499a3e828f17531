import {
  BUDGET_NAMES,
  type BudgetName,
  type Budgets,
  type Task,
  type TaskUsage,
} from '../../../shared/tasks.js';

/** How much of each budget a task used: seconds running, tokens, dollars. */
export type BudgetUse = Record<BudgetName, number>;
export type ReachedBudget = { budget: BudgetName; limit: number; used: number };

/** The first budget the task has used up, or null. */
export function reachedBudget(limits: Task['budgets'], used: BudgetUse): ReachedBudget | null {
  for (const budget of BUDGET_NAMES) {
    const limit = limits[budget];
    if (limit !== null && used[budget] >= limit) {
      return { budget, limit, used: rounded(budget, used[budget]) };
    }
  }
  return null;
}

/** Limits with the raised ones given on resume; the rest stay as they were. */
export function raisedBudgets(limits: Task['budgets'], raised: Budgets = {}): Task['budgets'] {
  const merged = { ...limits };
  for (const budget of BUDGET_NAMES) {
    const limit = raised[budget];
    if (limit !== undefined) merged[budget] = limit;
  }
  return merged;
}

/** Why a task cannot resume yet, and how to let it: the budget, its limit, what was used. */
export function stillReachedMessage(taskId: string, reached: ReachedBudget): string {
  const { budget, limit, used } = reached;
  return (
    `task ${taskId} has used ${amount(budget, used)} of its ${budget} budget of ` +
    `${amount(budget, limit)}; resume it with {"budgets": {"${budget}": <more than ${used}>}} to raise it`
  );
}

function amount(budget: BudgetName, value: number): string {
  if (budget === 'max_duration_seconds') return `${value} s`;
  if (budget === 'max_cost_usd') return `$${value}`;
  return `${value} tokens`;
}

/** Seconds to the millisecond and dollars to the millionth: what a person reads. */
function rounded(budget: BudgetName, value: number): number {
  if (budget === 'max_duration_seconds') return Math.round(value * 1000) / 1000;
  if (budget === 'max_cost_usd') return Math.round(value * 1e6) / 1e6;
  return value;
}

/**
 * What a task uses: tokens and dollars of its model calls, and seconds of running, a clock
 * stopped while it is paused. Tokens and dollars are the sums of the task's rows in the usage
 * ledger, copied into `usage` (the task's own), so the task and GET /v1/usage say the same.
 */
export class TaskMeter {
  private runningMs = 0;
  private runningSince: number | undefined;

  constructor(
    private readonly usage: TaskUsage,
    private readonly totals: () => TaskUsage,
  ) {}

  start(): void {
    this.runningSince ??= Date.now();
  }

  stop(): void {
    if (this.runningSince === undefined) return;
    this.runningMs += Date.now() - this.runningSince;
    this.runningSince = undefined;
  }

  /** Reads the ledger again, after a model call of the task. */
  refresh(): void {
    Object.assign(this.usage, this.totals());
  }

  used(): BudgetUse {
    const stretch = this.runningSince === undefined ? 0 : Date.now() - this.runningSince;
    return {
      max_duration_seconds: (this.runningMs + stretch) / 1000,
      max_tokens: this.usage.input_tokens + this.usage.output_tokens,
      max_cost_usd: this.usage.cost_usd,
    };
  }
}
