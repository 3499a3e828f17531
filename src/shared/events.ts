import { z } from 'zod';
import { Timestamp } from './common.js';
import { EndedBy, TerminationReason } from './computers.js';
import { Approval, READ_TYPES } from './approvals.js';

/** What approval_required says, on the computer's stream and a task's. */
export const approvalFields = {
  approval_id: z.string(),
  task_id: z.string().nullable(),
  action: Approval.shape.action,
  policy_id: z.string(),
  reason: z.string(),
  url: z.string().nullable(),
  target: Approval.shape.target,
  screenshot_url: z.string().nullable(),
};

/** Events of GET /computers/{id}/events: each is one SSE event's JSON data. */
const eventBase = { computer_id: z.string(), timestamp: Timestamp };
const requestBase = { ...eventBase, request_id: z.string() };

export const ActionRequestEvent = z
  .object({
    type: z.literal('action_request'),
    ...requestBase,
    action: z
      .object({ type: z.string() })
      .loose()
      .describe('The action as the server runs it: aliases resolved, coordinates as `at`.'),
    source: z
      .literal('live_view')
      .optional()
      .describe("Set when a person sent the action from the window's live view."),
  })
  .meta({ id: 'ActionRequestEvent' });

export const ActionResponseEvent = z
  .object({
    type: z.literal('action_response'),
    ...requestBase,
    status: z.enum(['success', 'error']),
    error_message: z.string().optional(),
    exit_code: z.number().int().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
  })
  .meta({ id: 'ActionResponseEvent' });

export const ExecOutputEvent = z
  .object({
    type: z.literal('exec_output'),
    ...requestBase,
    data: z.string().describe('The output chunk, base64 of its UTF-8 bytes.'),
    is_stderr: z.boolean(),
  })
  .meta({ id: 'ExecOutputEvent' });

export const TabEvent = z
  .object({
    type: z.literal('tab'),
    ...eventBase,
    event: z.enum(['opened', 'closed', 'switched']),
    tab_id: z.string(),
    url: z.string(),
  })
  .meta({ id: 'TabEvent' });

export const TabRefusedEvent = z
  .object({
    type: z.literal('tab_refused'),
    ...eventBase,
    url: z
      .string()
      .describe('Where the refused tab was headed, as far as it had got (often about:blank).'),
    max_tabs: z.number().int().describe('The limit the tab would have passed (limits.max_tabs).'),
    message: z.string(),
  })
  .describe(
    'A page opened a tab (window.open, a target=_blank link) while the computer already had limits.max_tabs tabs; the new tab was closed at once and never listed.',
  )
  .meta({ id: 'TabRefusedEvent' });

export const NavigationEvent = z
  .object({
    type: z.literal('navigation'),
    ...eventBase,
    tab_id: z.string(),
    url: z.string().describe("The URL the tab's main frame navigated to."),
  })
  .meta({ id: 'NavigationEvent' });

export const DownloadEvent = z
  .object({
    type: z.literal('download'),
    ...eventBase,
    state: z
      .enum(['started', 'saved', 'failed'])
      .describe('Each download is announced started, then saved or failed.'),
    tab_id: z.string(),
    name: z.string().describe('Its name in GET /computers/{id}/downloads once saved.'),
    url: z.string().describe('Where the file comes from.'),
    size_bytes: z.number().int().nullable().describe('Its size once saved.'),
    error: z.string().nullable().describe('Why it was not saved, when it failed.'),
  })
  .describe(
    "A download of the computer's browser: started, then saved whole in the computer's downloads, or failed.",
  )
  .meta({ id: 'DownloadEvent' });

export const StatusEvent = z
  .object({
    type: z.literal('status'),
    ...eventBase,
    status: z.literal('terminated'),
    termination_reason: TerminationReason,
    ended_by: EndedBy.optional(),
  })
  .meta({ id: 'StatusEvent' });

/** A policy held an action for a person (docs/API.md §14). */
export const ApprovalRequiredEvent = z
  .object({
    type: z.literal('approval_required'),
    ...eventBase,
    ...approvalFields,
  })
  .meta({ id: 'ApprovalRequiredEvent' });

export const ApprovalDecidedEvent = z
  .object({
    type: z.literal('approval_decided'),
    ...eventBase,
    approval_id: z.string(),
    task_id: z.string().nullable(),
    status: z.enum(['approved', 'denied', 'expired']),
    note: z.string().nullable(),
    status_reason: z.string().nullable(),
  })
  .meta({ id: 'ApprovalDecidedEvent' });

export const ComputerEvent = z
  .discriminatedUnion('type', [
    ApprovalRequiredEvent,
    ApprovalDecidedEvent,
    ActionRequestEvent,
    ActionResponseEvent,
    ExecOutputEvent,
    TabEvent,
    TabRefusedEvent,
    NavigationEvent,
    DownloadEvent,
    StatusEvent,
  ])
  .meta({ id: 'ComputerEvent' });
export type ComputerEvent = z.infer<typeof ComputerEvent>;
export type ActionRequestEvent = z.infer<typeof ActionRequestEvent>;
export type ActionResponseEvent = z.infer<typeof ActionResponseEvent>;
export type ExecOutputEvent = z.infer<typeof ExecOutputEvent>;
export type TabEvent = z.infer<typeof TabEvent>;
export type TabRefusedEvent = z.infer<typeof TabRefusedEvent>;
export type NavigationEvent = z.infer<typeof NavigationEvent>;
export type DownloadEvent = z.infer<typeof DownloadEvent>;
export type StatusEvent = z.infer<typeof StatusEvent>;
export type ApprovalRequiredEvent = z.infer<typeof ApprovalRequiredEvent>;
export type ApprovalDecidedEvent = z.infer<typeof ApprovalDecidedEvent>;

/**
 * A person's input: an action they sent from the window that does something to the computer (a
 * click, a key, a tab switched). It takes over from a task; a read (the window lists a computer's
 * tabs when a person opens it) does not.
 */
export function isPersonInput(event: Pick<ActionRequestEvent, 'action' | 'source'>): boolean {
  return event.source === 'live_view' && !READ_TYPES.has(event.action.type);
}
