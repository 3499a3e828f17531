import { z } from 'zod';
import { ErrorBody } from './errors.js';

export const MAX_EXEC_TIMEOUT_SECONDS = 3600;
/** exec/sync keeps this much of each stream unless the body asks for another bound. */
export const DEFAULT_MAX_OUTPUT_LENGTH = 1024 * 1024;
const MAX_OUTPUT_LENGTH = 64 * 1024 * 1024;

/** What every shell command body says (exec, exec/sync, and /debug, which adds its own bound). */
export const execFields = {
  command: z.string().min(1, 'command must not be empty').max(100_000),
  cwd: z
    .string()
    .max(4096)
    .optional()
    .describe("Absolute, or relative to the computer's workspace folder (the default)."),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("Merged over the server's environment and the computer's own (DISPLAY)."),
  timeout_seconds: z.number().positive().max(MAX_EXEC_TIMEOUT_SECONDS).default(120),
};

export const maxOutputLength = (defaultLength: number) =>
  z.number().int().positive().max(MAX_OUTPUT_LENGTH).default(defaultLength);

export const ExecBody = z.object(execFields).meta({ id: 'ExecBody' });
export type ExecBody = z.infer<typeof ExecBody>;

export const ExecSyncBody = z
  .object({ ...execFields, max_output_length: maxOutputLength(DEFAULT_MAX_OUTPUT_LENGTH) })
  .meta({ id: 'ExecSyncBody' });
export type ExecSyncBody = z.infer<typeof ExecSyncBody>;

export const ExecSyncResult = z
  .object({
    stdout: z.string(),
    stderr: z.string(),
    exit_code: z.number().int().describe('-1 when the command was killed (timeout).'),
    truncated: z.literal(true).optional().describe('Present when a stream was cut.'),
  })
  .meta({ id: 'ExecSyncResult' });
export type ExecSyncResult = z.infer<typeof ExecSyncResult>;

/** One line of the NDJSON answer of POST /computers/{id}/exec. */
export const ExecOutputLine = z.object({
  type: z.enum(['stdout', 'stderr']),
  data: z.string().describe('UTF-8 text, at most 64 KiB per line.'),
});
export const ExecExitLine = z.object({ type: z.literal('exit'), code: z.number().int() });
export const ExecErrorLine = z
  .object({
    type: z.literal('error'),
    code: ErrorBody.shape.code,
    message: z.string(),
  })
  .describe(
    'The command did not run: input it cannot start with (invalid_request), or a refusal that came after the answer began (a person denied it while the answer was kept alive).',
  );
export const ExecLine = z
  .union([ExecOutputLine, ExecExitLine, ExecErrorLine])
  .meta({ id: 'ExecLine' });
export type ExecOutputLine = z.infer<typeof ExecOutputLine>;
export type ExecExitLine = z.infer<typeof ExecExitLine>;
export type ExecLine = z.infer<typeof ExecLine>;
