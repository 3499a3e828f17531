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

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

export function now(): string {
  return new Date().toISOString();
}
