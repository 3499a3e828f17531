import { z } from 'zod';
import { Timestamp } from './common.js';

/** Supervising by hand (docs/API.md §14): policies, approvals and what waits for a person. */

/** Action types a policy can name: the action routes' types, and the shell's entry points. */
export const GATED_TYPES = [
  'click',
  'double_click',
  'triple_click',
  'right_click',
  'mouse_down',
  'mouse_up',
  'move',
  'drag',
  'scroll',
  'type',
  'point_and_type',
  'key',
  'keypress',
  'hotkey',
  'key_down',
  'key_up',
  'wait',
  'screenshot',
  'navigate',
  'html',
  'viewport',
  'change_proxy',
  'new_tab',
  'switch_tab',
  'close_tab',
  'list_tabs',
  'exec',
  'debug',
] as const;
export type GatedType = (typeof GATED_TYPES)[number];

/** Actions that look at the computer: a recording's list of actions hides them unless asked. */
export const LOOK_TYPES: ReadonlySet<string> = new Set<GatedType>([
  'screenshot',
  'html',
  'list_tabs',
]);

/**
 * Actions that change nothing: the looks, and a wait. A policy holds one only when its
 * action_types names it; a person sending one from the window takes no task over.
 */
export const READ_TYPES: ReadonlySet<string> = new Set([...LOOK_TYPES, 'wait']);

/** A regular expression given as text: checked when the policy is stored. */
const Pattern = (what: string) =>
  z
    .string()
    .min(1)
    .max(1000)
    .superRefine((text, ctx) => {
      try {
        new RegExp(text);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} is not a valid regular expression: ${(error as Error).message}`,
        });
      }
    });

export const PolicyTarget = z
  .strictObject({
    role: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('ARIA role of the element, e.g. "button", "link", "textbox".'),
    name_pattern: Pattern('target.name_pattern')
      .optional()
      .describe("Regex on the element's accessible name (case-insensitive)."),
    input_type: z
      .string()
      .min(1)
      .max(50)
      .optional()
      .describe('The type of an input element, e.g. "password".'),
  })
  .describe('The element under the point of the action, or focused for typing.');
export type PolicyTarget = z.infer<typeof PolicyTarget>;

const WHEN_KEYS =
  'action_types, url_pattern, new_origin, target, text_pattern, command_pattern, computer_ids, task_only';

export const PolicyWhen = z
  .strictObject(
    {
      action_types: z
        .array(z.enum(GATED_TYPES))
        .min(1)
        .optional()
        .describe('"exec" covers exec, exec/sync and debug; "click" every click alias.'),
      url_pattern: z
        .string()
        .min(1)
        .max(2000)
        .optional()
        .describe(
          "A glob on the page's URL before the action: * any characters but /, ** any characters.",
        ),
      new_origin: z
        .literal(true)
        .optional()
        .describe('A navigation, or a click on a link, that leaves the current origin.'),
      target: PolicyTarget.optional(),
      text_pattern: Pattern('text_pattern').optional().describe('Regex on typed text.'),
      command_pattern: Pattern('command_pattern')
        .optional()
        .describe('Regex on exec, exec/sync and debug commands.'),
      computer_ids: z.array(z.string().min(1)).min(1).optional(),
      task_only: z.literal(true).optional().describe('Only actions an agent task sends.'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `${issue.keys.join(', ')} is not a condition; a policy's when has ${WHEN_KEYS}`
          : undefined,
    },
  )
  .describe('All conditions given must match; none given matches every action.');
export type PolicyWhen = z.infer<typeof PolicyWhen>;

export const POLICY_DECISIONS = ['ask', 'deny', 'allow'] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

export const Policy = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[\w.-]+$/, 'use letters, digits, _, . and -'),
    description: z.string().max(1000).optional(),
    when: PolicyWhen.default({}),
    then: z.enum(POLICY_DECISIONS),
  })
  .meta({ id: 'Policy' });
export type Policy = z.infer<typeof Policy>;

/** The list, first match wins; ids are unique. */
export const PolicyList = z.array(Policy).superRefine((policies, ctx) => {
  const seen = new Set<string>();
  policies.forEach((policy, index) => {
    if (seen.has(policy.id)) {
      ctx.addIssue({
        code: 'custom',
        path: [index, 'id'],
        message: `policy id "${policy.id}" is used twice; each policy needs its own id`,
      });
    }
    seen.add(policy.id);
  });
});

/** What stands for text typed into a password field wherever a person or a store would see it. */
export const PASSWORD_MASK = '••••';

export const ApprovalTarget = z
  .object({
    role: z.string().nullable(),
    name: z.string().nullable(),
    input_type: z.string().nullable(),
    tag: z.string().nullable(),
    href: z.string().nullable().describe('Where a link leads.'),
    x: z.number().nullable(),
    y: z.number().nullable(),
  })
  .meta({ id: 'ApprovalTarget' });
export type ApprovalTarget = z.infer<typeof ApprovalTarget>;

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const Approval = z
  .object({
    id: z.string(),
    status: z.enum(APPROVAL_STATUSES),
    computer_id: z.string(),
    task_id: z.string().nullable(),
    tab_id: z.string().nullable(),
    action: z
      .object({ type: z.string() })
      .loose()
      .describe('The held action as it would run; for a shell command {type: "exec", command}.'),
    policy_id: z.string(),
    reason: z.string().describe('Why a person is asked, for them to read.'),
    requested_by: z
      .string()
      .nullable()
      .describe(
        'Who sent the action, for a person to tell agents apart: the SDK and its version, an MCP client, or a User-Agent, and the key it used; null for an agent task (task_id names it).',
      ),
    url: z.string().nullable().describe("The page's URL when it was asked (browsers)."),
    target: ApprovalTarget.nullable(),
    screenshot_url: z.string().nullable().describe('The screen when asked, the target drawn.'),
    created_at: Timestamp,
    decided_at: Timestamp.nullable(),
    note: z.string().nullable().describe("The person's note with the decision."),
    status_reason: z
      .string()
      .nullable()
      .describe('Why it expired: what changed before it was approved, or the timeout.'),
  })
  .meta({ id: 'Approval' });
export type Approval = z.infer<typeof Approval>;

export const ApprovalListQuery = z.object({
  status: z.enum(APPROVAL_STATUSES).optional(),
  computer_id: z.string().min(1).max(200).optional(),
  task_id: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export type ApprovalListQuery = z.output<typeof ApprovalListQuery>;

export const ApprovalDecisionBody = z.object({
  note: z.string().max(2000).optional(),
});

export const ATTENTION_TYPES = ['approval', 'handoff', 'stalled', 'budget', 'failed'] as const;
export type AttentionType = (typeof ATTENTION_TYPES)[number];

export const AttentionItem = z
  .object({
    type: z.enum(ATTENTION_TYPES),
    since: Timestamp,
    task_id: z.string().nullable(),
    computer_id: z.string().nullable(),
    approval_id: z.string().optional(),
    summary: z.string(),
  })
  .meta({ id: 'AttentionItem' });
export type AttentionItem = z.infer<typeof AttentionItem>;

export const AttentionDismissBody = z.object({
  task_id: z.string().min(1).describe('A failed task listed in GET /attention.'),
});
