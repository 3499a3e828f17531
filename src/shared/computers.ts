import { z } from 'zod';
import { Display, Timestamp } from './common.js';
import { Stealth } from './stealth.js';

export const ComputerKind = z.enum(['browser', 'desktop']);
export type ComputerKind = z.infer<typeof ComputerKind>;

export const TerminationReason = z.enum([
  'deleted',
  'idle_timeout',
  'max_lifetime',
  'crashed',
  'shutdown',
  'backend_lost',
]);
export type TerminationReason = z.infer<typeof TerminationReason>;

const ONE_WEEK = 7 * 24 * 3600;
const ONE_DAY = 24 * 3600;

export const CreateComputerBody = z.object({
  kind: ComputerKind.default('browser'),
  display: Display.optional(),
  max_lifetime_seconds: z.number().positive().max(ONE_WEEK).optional(),
  timeout_seconds: z
    .number()
    .positive()
    .max(ONE_WEEK)
    .optional()
    .describe('Deprecated alias of max_lifetime_seconds.'),
  inactivity_timeout_seconds: z.number().positive().max(ONE_DAY).optional(),
  idle_timeout_enabled: z.boolean().optional(),
  auto_kill: z.boolean().optional().describe('Deprecated alias of idle_timeout_enabled.'),
  persistent: z.boolean().optional(),
  environment_id: z.string().min(1).max(200).optional(),
  context_id: z.string().max(1000).optional(),
  stealth: Stealth.optional(),
  use_advanced_proxy: z.boolean().optional(),
  recording: z
    .boolean()
    .optional()
    .describe(
      'Benchtop extension: false records nothing of this computer (default: recording.enabled in settings).',
    ),
  cdp: z
    .boolean()
    .optional()
    .describe(
      'Benchtop extension, browser only: give the computer a cdp_url that Playwright connectOverCDP and Puppeteer connect drive (its own Chromium).',
    ),
  host_display: z
    .boolean()
    .optional()
    .describe(
      "Benchtop extension, desktop only: drive the machine's real screen (needs desktop.host_mode in settings; one at a time).",
    ),
});
export type CreateComputerBody = z.infer<typeof CreateComputerBody>;

export const ComputerStatusValue = z.enum(['running', 'terminated']);

const lifetimeFields = {
  id: z.string(),
  status: ComputerStatusValue,
  created_at: Timestamp,
  last_activity_at: Timestamp,
  expires_at: Timestamp.nullable(),
  idle_expires_at: Timestamp.nullable(),
  max_lifetime_seconds: z.number().nullable(),
  inactivity_timeout_seconds: z.number(),
  idle_timeout_enabled: z.boolean(),
  auto_kill: z.boolean(),
  idle_held: z
    .boolean()
    .describe(
      "True while it cannot idle out: an agent task is on it, or an action on it waits for a person's approval. last_activity_at and idle_expires_at then move with the clock.",
    ),
};

export const ComputerStatus = z.object(lifetimeFields).meta({ id: 'ComputerStatus' });
export type ComputerStatus = z.infer<typeof ComputerStatus>;

/** Who ended a computer on request (termination_reason deleted). */
export const EndedBy = z
  .string()
  .describe(
    'Who ended it, when termination_reason is deleted: the client and the prefix of its key ("Python SDK 2.39.0 (key sk_5bRW…)", "MCP client Claude 0.9 (key …)"), "a person in the window", or "its task task_…".',
  );

export const Computer = z
  .object({
    ...lifetimeFields,
    kind: ComputerKind,
    persistent: z.boolean(),
    environment_id: z.string().nullable(),
    context_id: z.string().nullable(),
    display: z.object({ width: z.number(), height: z.number(), scale: z.number() }),
    endpoints: z.object({ events: z.string(), screencast: z.string(), live_view: z.string() }),
    cdp_url: z
      .string()
      .nullable()
      .describe(
        'ws://HOST:PORT/cdp/{id}?token=… while a computer created with cdp runs; null otherwise. The token is a secret.',
      ),
    backend: z
      .string()
      .nullable()
      .describe(
        'The browser backend (browser.backends in settings) the computer runs on; null for a desktop.',
      ),
    terminated_at: Timestamp.optional(),
    termination_reason: TerminationReason.optional(),
    ended_by: EndedBy.optional(),
  })
  .meta({ id: 'Computer' });
export type Computer = z.infer<typeof Computer>;

export const ListComputersQuery = z.object({
  type: z.enum(['live', 'persistent']).default('live'),
});

export const Environment = z
  .object({
    id: z.string(),
    kind: ComputerKind,
    created_at: Timestamp,
    updated_at: Timestamp,
    source_computer_id: z.string(),
  })
  .meta({ id: 'Environment' });
export type Environment = z.infer<typeof Environment>;

export const ComputerDownload = z
  .object({
    name: z.string().describe('The file name the site suggested, made unique on this computer.'),
    size_bytes: z.number().int(),
    created_at: Timestamp.describe('When the download finished.'),
  })
  .meta({ id: 'ComputerDownload' });
export type ComputerDownload = z.infer<typeof ComputerDownload>;

export const DownloadList = z.object({ data: z.array(ComputerDownload) });

export const KeepaliveResult = z.object({
  status: z.literal('running'),
  idle_expires_at: Timestamp.nullable(),
});
