import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'comp'
  | 'task'
  | 'resp'
  | 'call'
  | 'msg'
  | 'tab'
  | 'req'
  | 'key'
  | 'rs'
  | 'cu'
  | 'fc'
  | 'apr'
  | 'use';

const ID_BYTES = 12;
/**
 * Random bytes drawn 256 ids at a time, as crypto.randomUUID keeps its own: every request takes an
 * id or more, and each draw is a call into OpenSSL (3 µs in a loop, ~30 µs per request in a CPU
 * profile of the actions bench, where it runs cold between Chromium's turns).
 */
const POOL_BYTES = ID_BYTES * 256;
let pool = Buffer.alloc(0);
let used = 0;

export function newId(prefix: IdPrefix): string {
  if (used + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const bytes = pool.subarray(used, (used += ID_BYTES));
  return `${prefix}_${bytes.toString('base64url')}`;
}

export function now(): string {
  return new Date().toISOString();
}
