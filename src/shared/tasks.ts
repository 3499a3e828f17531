import { z } from 'zod';
import { Timestamp } from './common.js';
import { OutputAction } from './responses.js';

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
  })
  .meta({ id: 'Task' });
export type Task = z.infer<typeof Task>;

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

const base = { task_id: z.string(), step: z.number().int(), timestamp: Timestamp };

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
    z.object({ type: z.literal('action'), ...base, action: OutputAction }),
    z.object({
      type: z.literal('action_result'),
      ...base,
      status: z.enum(['success', 'error']),
      error_message: z.string().nullable(),
    }),
    z.object({ type: z.literal('user_message'), ...base, text: z.string() }),
    z.object({ type: z.literal('paused'), ...base }),
    z.object({ type: z.literal('resumed'), ...base }),
    z.object({ type: z.literal('completed'), ...base, result: z.string().nullable() }),
    z.object({ type: z.literal('failed'), ...base, error: z.string() }),
    z.object({ type: z.literal('cancelled'), ...base }),
    z.object({ type: z.literal('max_steps'), ...base }),
  ])
  .meta({ id: 'TaskEvent' });
export type TaskEvent = z.infer<typeof TaskEvent>;
export type TaskEventType = TaskEvent['type'];

export const TERMINAL_EVENTS = new Set<TaskEventType>([
  'completed',
  'failed',
  'cancelled',
  'max_steps',
]);
