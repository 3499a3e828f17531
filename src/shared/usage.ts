import { z } from 'zod';
import { Timestamp } from './common.js';

/** One model call in the ledger (docs/API.md §15). */
export const UsageRow = z
  .object({
    id: z.string().describe('use_…: the row, and the `after` cursor of the next page.'),
    response_id: z.string().describe('The Responses API response the call answered.'),
    task_id: z.string().nullable().describe('The agent task that made the call; null otherwise.'),
    provider: z.string().describe('The provider kind: openai, anthropic, openai-compatible, …'),
    model: z.string().describe('The Benchtop model name (the key under models.providers).'),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cached_tokens: z
      .number()
      .int()
      .describe('Input tokens the provider served from its cache (a part of input_tokens).'),
    cost_usd: z
      .number()
      .nullable()
      .describe('US dollars at models.providers.<name>.price; null when the model has no price.'),
    latency_ms: z.number().int().describe('From the request to the provider to its full answer.'),
    images: z.number().int().describe('Images sent to the model in this call.'),
    error: z
      .string()
      .nullable()
      .describe(
        'The failure code when the call gave no answer (model_unreachable, model_blocked, …): its tokens are 0, as no provider reports any for it.',
      ),
    at: Timestamp.describe('When the call started.'),
  })
  .meta({ id: 'UsageRow' });
export type UsageRow = z.infer<typeof UsageRow>;

export const UsageQuery = z.object({
  task_id: z.string().min(1).max(200).optional(),
  response_id: z.string().min(1).max(200).optional(),
  since: z.iso
    .datetime({ offset: true, error: 'since must be an ISO-8601 time, e.g. 2026-11-22T10:00:00Z' })
    .optional()
    .describe('Only calls made at or after this time.'),
  after: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The `last_id` of the page before: the rows after it.'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});
export type UsageQuery = z.output<typeof UsageQuery>;

export const UsageList = z
  .object({
    object: z.literal('list'),
    data: z.array(UsageRow).describe("The organization's model calls, oldest first."),
    has_more: z.boolean().describe('More rows match: ask again with `after` = last_id.'),
    last_id: z.string().nullable(),
  })
  .meta({ id: 'UsageList' });
export type UsageList = z.infer<typeof UsageList>;
