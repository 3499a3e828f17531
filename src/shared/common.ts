import { z } from 'zod';

export const Timestamp = z.string().describe('ISO-8601 UTC with milliseconds');

/** Coordinates are screenshot pixels; the bound only rejects absurd values. */
export const Coordinate = z.number().finite().min(0).max(65_535);

export const Display = z.object({
  width: z.number().int().min(64).max(7680).default(1280),
  height: z.number().int().min(64).max(4320).default(720),
  scale: z.number().min(0.5).max(4).default(1),
});
export type Display = z.infer<typeof Display>;

export const Empty = z.object({});

/**
 * The SDKs may send `null` for fields they do not set; the contract says null means absent.
 * Applied to every body before validation.
 */
export function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== null) out[key] = stripNulls(item);
  }
  return out;
}
