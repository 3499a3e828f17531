import type { z } from 'zod';
import { stripNulls } from '../../shared/common.js';
import { invalidRequest } from '../core/errors.js';

const MAX_DEPTH = 64;

/** Validates input against a contract schema; the first problem becomes a 400 naming its field. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(stripNulls(checkDepth(input)));
  if (result.success) return result.data;
  const issue = closestIssue(result.error.issues[0]!);
  // An unknown field is named itself, not the object holding it.
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  const param = path.join('.');
  throw invalidRequest(describeIssue(issue, param), param || undefined);
}

/**
 * A union none of whose options fit (`{action}` or a bare action) is explained by the option that
 * got furthest: the deepest issue, and at equal depth a wrong value over a missing field.
 */
function closestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const option of issue.errors) {
    const first = option[0];
    if (first && (!best || reach(first) > reach(best))) best = first;
  }
  // Options that all fail at the value itself: "must be a string or an array" (unless it is missing).
  if (!best || (best.path.length === 0 && !isMissing(best))) return issue;
  return closestIssue({ ...best, path: [...issue.path, ...best.path] });
}

function reach(issue: z.core.$ZodIssue): number {
  return issue.path.length * 3 + (isMissing(issue) ? 0 : isDiscriminatorMiss(issue) ? 1 : 2);
}

function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
}

/** A discriminated union found no option for the value's `type`: its message says which exist. */
function isDiscriminatorMiss(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_union' && issue.errors.length === 0;
}

function describeIssue(issue: z.core.$ZodIssue, param: string): string {
  const field = param || 'the body';
  switch (issue.code) {
    case 'invalid_type':
      if (isMissing(issue)) return `${field} is required`;
      return `${field} must be ${article(issue.expected)}${param ? '' : ' (send a JSON object)'}`;
    case 'invalid_value':
      return `${field} must be one of: ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'too_small':
      return `${field} must be ${bound(issue.origin, '≥', '>', issue.minimum, issue.inclusive)}`;
    case 'too_big':
      return `${field} must be ${bound(issue.origin, '≤', '<', issue.maximum, issue.inclusive)}`;
    case 'invalid_union': {
      const expected = issue.errors.flatMap((option) =>
        option[0]?.code === 'invalid_type' && option[0].path.length === 0
          ? [article(option[0].expected)]
          : [],
      );
      if (isDiscriminatorMiss(issue))
        return issue.message.startsWith('must') ? `${field} ${issue.message}` : issue.message;
      if (expected.length === issue.errors.length)
        return `${field} must be ${expected.join(' or ')}`;
      return `${field} is not valid: ${issue.message}`;
    }
    default:
      return issue.message.includes(field) ? issue.message : `${field}: ${issue.message}`;
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function bound(
  origin: string,
  inclusive: string,
  exclusive: string,
  limit: unknown,
  isInclusive?: boolean,
): string {
  const op = isInclusive === false ? exclusive : inclusive;
  if (origin === 'string') return `${op} ${String(limit)} characters long`;
  if (origin === 'array') return `a list of ${op} ${String(limit)} items`;
  return `${op} ${String(limit)}`;
}

function checkDepth(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH)
    throw invalidRequest(`the body is nested more than ${MAX_DEPTH} levels deep`);
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) checkDepth(item, depth + 1);
  }
  return value;
}
