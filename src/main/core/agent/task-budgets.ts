import type { ModelPrice } from '../../../shared/settings.js';
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

/** The tokens of one model call, as the cost of it counts them. */
export type CallTokens = {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens the provider served from its cache (part of input_tokens). */
  cached_input_tokens?: number;
};

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

/** Dollars of one model call at the model's price per million tokens (no price: free). */
export function costOf(tokens: CallTokens, price: ModelPrice | undefined): number {
  if (!price) return 0;
  const cached = Math.min(tokens.cached_input_tokens ?? 0, tokens.input_tokens);
  const cachedPrice = price.cached_input_per_million ?? price.input_per_million;
  return (
    ((tokens.input_tokens - cached) * price.input_per_million +
      cached * cachedPrice +
      tokens.output_tokens * price.output_per_million) /
    1_000_000
  );
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
 * What a task uses: tokens and dollars of its model calls (added to `usage`, the task's own), and
 * seconds of running, a clock stopped while it is paused.
 */
export class TaskMeter {
  private runningMs = 0;
  private runningSince: number | undefined;

  constructor(
    private readonly usage: TaskUsage,
    private readonly price: () => ModelPrice | undefined,
  ) {}

  start(): void {
    this.runningSince ??= Date.now();
  }

  stop(): void {
    if (this.runningSince === undefined) return;
    this.runningMs += Date.now() - this.runningSince;
    this.runningSince = undefined;
  }

  count(tokens: CallTokens): void {
    this.usage.input_tokens += tokens.input_tokens;
    this.usage.output_tokens += tokens.output_tokens;
    this.usage.cost_usd += costOf(tokens, this.price());
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
