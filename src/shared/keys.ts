import { z } from 'zod';
import { Timestamp } from './common.js';

/** A stored API key as lists show it: never the key itself, never its hash. */
export const ApiKey = z
  .object({
    id: z.string(),
    org: z.string().describe('The organization whose computers, tasks and keys the key reaches.'),
    prefix: z.string().describe('The first characters of the key, to tell keys apart.'),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyList = z.array(ApiKey);

/** The answer of POST /keys: the only time the key itself is shown. */
export const CreatedApiKey = ApiKey.extend({
  key: z.string().describe('The key (sk_…); shown only in this answer.'),
}).meta({ id: 'CreatedApiKey' });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;
