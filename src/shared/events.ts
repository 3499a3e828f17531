import { z } from 'zod';
import { Timestamp } from './common.js';

/**
 * Events of GET /computers/{id}/events (API.md §7). Only those published today are here; the
 * stream itself and the remaining types (action_request, tab, navigation, status) come with it.
 */
const eventBase = { computer_id: z.string(), timestamp: Timestamp, request_id: z.string() };

export const ExecOutputEvent = z
  .object({
    type: z.literal('exec_output'),
    ...eventBase,
    data: z.string().describe('The output chunk, base64 of its UTF-8 bytes.'),
    is_stderr: z.boolean(),
  })
  .meta({ id: 'ExecOutputEvent' });

export const ActionResponseEvent = z
  .object({
    type: z.literal('action_response'),
    ...eventBase,
    status: z.enum(['success', 'error']),
    error_message: z.string().optional(),
    exit_code: z.number().int().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
  })
  .meta({ id: 'ActionResponseEvent' });

export const ComputerEvent = z.discriminatedUnion('type', [ExecOutputEvent, ActionResponseEvent]);
export type ComputerEvent = z.infer<typeof ComputerEvent>;
export type ExecOutputEvent = z.infer<typeof ExecOutputEvent>;
export type ActionResponseEvent = z.infer<typeof ActionResponseEvent>;
