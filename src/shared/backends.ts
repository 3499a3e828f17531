import { z } from 'zod';
import { BACKEND_TYPES } from './settings.js';

/** One place browser computers run (docs/API.md §17), as GET /backends shows it. */
export const Backend = z
  .object({
    name: z.string(),
    type: z.enum(BACKEND_TYPES),
    url: z.string().nullable().describe('The endpoint; null for the local backend.'),
    status: z
      .enum(['up', 'down'])
      .describe('down: its last health check or connection failed; no computer is placed there.'),
    capacity: z.number().int().describe('max_computers in settings.'),
    running: z
      .number()
      .int()
      .describe(
        "Browser computers on it now: every organization's for the owner's keys, only its own for another organization's.",
      ),
  })
  .meta({ id: 'Backend' });
export type Backend = z.infer<typeof Backend>;

export const BackendList = z.array(Backend);
