import { z } from 'zod';

/** Runs as scripts (docs/API.md §18): what is checked before a step, and how to ask for one. */

export const CheckedTarget = z
  .object({
    role: z.string().nullable(),
    name: z.string().nullable(),
    tag: z.string().nullable(),
    input_type: z.string().nullable(),
  })
  .describe('The element under the point (browsers), as assistive technology names it.');
export type CheckedTarget = z.infer<typeof CheckedTarget>;

export const StepCheck = z
  .object({
    url: z.string().nullable().describe("The page's URL (browsers), else null."),
    target: CheckedTarget.nullable(),
    region_hash: z
      .string()
      .nullable()
      .describe(
        'A difference hash of the 64×64 pixels around the point (16 hex digits) and their mean grey level (2 more); what desktops are checked by, and exported browser scripts.',
      ),
  })
  .meta({ id: 'StepCheck' });
export type StepCheck = z.infer<typeof StepCheck>;

export const SCRIPT_LANGUAGES = ['python', 'typescript'] as const;
export type ScriptLanguage = (typeof SCRIPT_LANGUAGES)[number];

export const TaskScriptQuery = z.object({
  lang: z
    .enum(SCRIPT_LANGUAGES)
    .default('python')
    .describe('The language of the script: python (default) or typescript.'),
});

export const ReplayTaskBody = z
  .object({
    computer_id: z
      .string()
      .min(1)
      .optional()
      .describe('Replay on this running computer instead of a new one of the same kind.'),
    heal: z
      .boolean()
      .default(true)
      .describe(
        "true: a step whose check fails is repaired by one call to the task's model; false: the replay fails there.",
      ),
  })
  .meta({ id: 'ReplayTask' });
export type ReplayTaskBody = z.output<typeof ReplayTaskBody>;
