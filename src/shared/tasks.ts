import { z } from 'zod';
import { Timestamp } from './common.js';
import { OutputAction } from './responses.js';
import { approvalFields } from './events.js';
import { StepCheck } from './task-scripts.js';

/** Why a task is paused (docs/API.md §14). */
export const PAUSED_REASONS = [
  'user',
  'takeover',
  'approval',
  'handoff',
  'stalled',
  'budget',
] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

export const STALL_KINDS = ['no_change', 'repeating', 'oscillating'] as const;
export type StallKind = (typeof STALL_KINDS)[number];

const budgetFields = {
  max_duration_seconds: z
    .number()
    .positive()
    .describe('Seconds the task may run (paused time does not count).'),
  max_tokens: z.number().int().positive().describe('Input and output tokens of its model calls.'),
  max_cost_usd: z
    .number()
    .positive()
    .describe('Dollars of its model calls, priced by models.providers.<name>.price.'),
};
export const BUDGET_NAMES = ['max_duration_seconds', 'max_tokens', 'max_cost_usd'] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];

/** Budgets a task pauses at; resume can raise them. */
export const Budgets = z.strictObject({
  max_duration_seconds: budgetFields.max_duration_seconds.optional(),
  max_tokens: budgetFields.max_tokens.optional(),
  max_cost_usd: budgetFields.max_cost_usd.optional(),
});
export type Budgets = z.infer<typeof Budgets>;

export const TaskUsage = z
  .object({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cached_tokens: z
      .number()
      .int()
      .describe('Input tokens the providers served from their caches (a part of input_tokens).'),
    cost_usd: z
      .number()
      .describe('Dollars of the calls whose model has a price (models.providers.<name>.price).'),
  })
  .describe("The sums of the task's rows in GET /v1/usage?task_id=…")
  .meta({ id: 'TaskUsage' });
export type TaskUsage = z.infer<typeof TaskUsage>;

/** Agent tasks. */

export const TASK_STATUSES = [
  'running',
  'paused',
  'completed',
  'failed',
  'cancelled',
  'max_steps',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** exit_code of each terminal status; null while running or paused. */
export const EXIT_CODES = { completed: 0, failed: 1, max_steps: 2, cancelled: 130 } as const;
export type TerminalStatus = keyof typeof EXIT_CODES;

export const MAX_TASK_STEPS = 500;

export const StartTaskBody = z
  .object({
    instruction: z.string().trim().min(1).max(100_000),
    kind: z.enum(['browser', 'desktop']).default('browser'),
    computer_id: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    agent_type: z.string().default('default'),
    max_steps: z.number().int().min(1).max(MAX_TASK_STEPS).default(50),
    temperature: z.number().min(0).max(2).optional(),
    viewport_width: z.number().int().min(64).max(7680).optional(),
    viewport_height: z.number().int().min(64).max(4320).optional(),
    screenshot_mode: z.enum(['url', 'base64']).default('url'),
    persistent: z.boolean().optional(),
    environment_id: z.string().min(1).optional(),
    recording: z
      .boolean()
      .optional()
      .describe(
        'false: the computer the task creates records nothing (default: recording.enabled).',
      ),
    stall_detection: z
      .boolean()
      .default(true)
      .describe('false: the task never pauses itself as stalled.'),
    ...Budgets.shape,
  })
  .meta({ id: 'StartTask' });
export type StartTaskBody = z.output<typeof StartTaskBody>;

export const StartTaskResponse = z.object({
  task_id: z.string(),
  status: z.literal('running'),
  computer_id: z.string(),
});

export const Task = z
  .object({
    task_id: z.string(),
    status: z.enum(TASK_STATUSES),
    exit_code: z.number().int().nullable(),
    computer_id: z.string(),
    instruction: z.string(),
    model: z.string(),
    steps: z.number().int().describe('Model turns taken so far.'),
    max_steps: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    result: z.string().nullable().describe('The final answer or message, once completed.'),
    error: z.string().nullable().describe('Why the task failed, for a person to read.'),
    paused_reason: z
      .enum(PAUSED_REASONS)
      .nullable()
      .describe('Why it is paused; null unless status is paused.'),
    paused_by: z
      .string()
      .nullable()
      .describe(
        "Who paused it when a program or a person did through the API, MCP or the window, named as the paused event's `by`; null otherwise.",
      ),
    usage: TaskUsage,
    budgets: z.object({
      max_duration_seconds: z.number().nullable(),
      max_tokens: z.number().nullable(),
      max_cost_usd: z.number().nullable(),
    }),
    replay_of: z
      .string()
      .nullable()
      .describe('The task this one replays (POST /agent/tasks/{id}/replay), else null.'),
  })
  .meta({ id: 'Task' });
export type Task = z.infer<typeof Task>;

/** What a task has before its first step; also fills rows stored before these fields existed. */
export function unstartedTaskFields(
  budgets: Budgets = {},
): Pick<Task, 'paused_reason' | 'paused_by' | 'usage' | 'budgets' | 'replay_of'> {
  return {
    paused_reason: null,
    paused_by: null,
    replay_of: null,
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 },
    budgets: {
      max_duration_seconds: budgets.max_duration_seconds ?? null,
      max_tokens: budgets.max_tokens ?? null,
      max_cost_usd: budgets.max_cost_usd ?? null,
    },
  };
}

export const DEFAULT_TASK_LIST_LIMIT = 100;
export const MAX_TASK_LIST_LIMIT = 1000;

/** Filters of GET /agent/tasks (the answer stays newest first). */
export const TaskListQuery = z.object({
  computer_id: z.string().min(1).max(200).optional().describe('Only tasks on this computer.'),
  status: z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(TASK_STATUSES)))
    .optional()
    .describe('Only tasks in these statuses, comma-separated: `running,paused`.'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_TASK_LIST_LIMIT)
    .default(DEFAULT_TASK_LIST_LIMIT)
    .describe(
      `At most this many tasks, the newest (default ${DEFAULT_TASK_LIST_LIMIT}, at most ${MAX_TASK_LIST_LIMIT}).`,
    ),
});
export type TaskListQuery = z.output<typeof TaskListQuery>;

export const TaskStatusAnswer = z.object({ status: z.enum(TASK_STATUSES) });
export const TaskMessageBody = z.object({
  message: z.string().trim().min(1).max(100_000),
});
export const TaskResumeBody = z.object({
  budgets: Budgets.optional().describe('Raise budgets the task reached (or any other).'),
});
export const TaskHandoffBody = z.object({
  reason: z.string().trim().min(1).max(2000),
});

const base = { task_id: z.string(), step: z.number().int(), timestamp: Timestamp };

/**
 * Who paused, resumed, messaged, handed off or cancelled a task through the API: the client and
 * the prefix of its key ("Python SDK 2.39.0 (key sk_5bRW…)"), or a person in the window. Absent
 * when the task did it itself (a stall, a budget, an approval, the model asking for a person).
 */
const SteeredBy = z
  .string()
  .optional()
  .describe(
    'Who asked, through the API: the client and its key prefix, or a person in the window.',
  );

export const TaskEvent = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('started'),
      ...base,
      computer_id: z.string(),
      max_steps: z.number().int(),
    }),
    z.object({ type: z.literal('screenshot'), ...base, screenshot_url: z.string() }),
    z.object({ type: z.literal('reasoning'), ...base, text: z.string() }),
    z.object({ type: z.literal('message'), ...base, text: z.string() }),
    z.object({
      type: z.literal('action'),
      ...base,
      action: OutputAction,
      check: StepCheck.optional().describe(
        'Where the screen was right before the action: what a replay or a script checks first.',
      ),
    }),
    z.object({
      type: z.literal('healed'),
      ...base,
      before: OutputAction.describe('The recorded action, whose check failed.'),
      after: OutputAction.describe('What the model did instead on the screen as it is now.'),
      reason: z.string().describe('How the screen differed from the run.'),
      screenshot_url: z.string().nullable(),
    }),
    z.object({
      type: z.literal('action_result'),
      ...base,
      status: z.enum(['success', 'error']),
      error_message: z.string().nullable(),
    }),
    z.object({
      type: z.literal('model_retry'),
      ...base,
      error: z.string().describe("What the model's server answered: a rate limit, an overload."),
      wait_ms: z.number().int().describe('How long the task waits before trying again.'),
      attempt: z.number().int().describe('The try that comes after the wait, from 2.'),
      attempts: z.number().int().describe('Tries at most: 1 + the model’s max_retries.'),
    }),
    z.object({ type: z.literal('user_message'), ...base, text: z.string(), by: SteeredBy }),
    z.object({
      type: z.literal('paused'),
      ...base,
      reason: z.enum(PAUSED_REASONS).optional(),
      by: SteeredBy,
    }),
    z.object({ type: z.literal('resumed'), ...base, by: SteeredBy }),
    z.object({
      type: z.literal('approval_required'),
      ...base,
      computer_id: z.string(),
      ...approvalFields,
    }),
    z.object({
      type: z.literal('approval_decided'),
      ...base,
      approval_id: z.string(),
      status: z.enum(['approved', 'denied', 'expired']),
      note: z.string().nullable(),
      status_reason: z.string().nullable(),
    }),
    z.object({ type: z.literal('handoff_requested'), ...base, reason: z.string(), by: SteeredBy }),
    z.object({
      type: z.literal('stalled'),
      ...base,
      reason: z.enum(STALL_KINDS),
      detail: z.string(),
    }),
    z.object({
      type: z.literal('budget_reached'),
      ...base,
      budget: z.enum(BUDGET_NAMES),
      limit: z.number(),
      used: z.number(),
    }),
    z.object({ type: z.literal('completed'), ...base, result: z.string().nullable() }),
    z.object({ type: z.literal('failed'), ...base, error: z.string() }),
    z.object({ type: z.literal('cancelled'), ...base, by: SteeredBy }),
    z.object({ type: z.literal('max_steps'), ...base }),
  ])
  .meta({ id: 'TaskEvent' });
export type TaskEvent = z.infer<typeof TaskEvent>;
export type TaskEventType = TaskEvent['type'];

/** The action_result of an action the model asked for that a pause kept from running. */
export const NOT_RUN_PAUSED = 'not performed: the task was paused before it ran';

/**
 * What the model is told at its next call when a person's pause kept a whole turn of its actions
 * from running (a scripted model gives that turn again on reading it).
 */
export const TURN_NOT_RUN =
  'The task was paused before your actions ran; none of them was performed.';

export const TERMINAL_EVENTS = new Set<TaskEventType>([
  'completed',
  'failed',
  'cancelled',
  'max_steps',
]);

/** Whether an event type ends its task (and names the status the task ended with). */
export const isTerminalEvent = (type: TaskEventType): type is TerminalStatus =>
  TERMINAL_EVENTS.has(type);
