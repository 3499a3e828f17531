import type { z } from 'zod';
import {
  ACTION_SCHEMAS,
  ACTION_TYPES,
  type ActionType,
  type ComputerAction,
} from '../../shared/actions.js';
import { stripNulls } from '../../shared/common.js';
import { invalidRequest } from '../core/errors.js';

const MAX_DEPTH = 64;

/** Validates input against a contract schema; the first problem becomes a 400 naming its field. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix = '',
): z.output<S> {
  const result = schema.safeParse(stripNulls(checkDepth(input)));
  if (result.success) return result.data;
  const issue = closestIssue(result.error.issues[0]!);
  // An unknown field is named itself, not the object holding it.
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  const param = prefix + path.join('.');
  throw invalidRequest(describeIssue(issue, param), param || undefined);
}

/**
 * A union none of whose options fit is explained by the option that got furthest (a list of
 * items fails inside an item, not at "input"), so the message names the field that is wrong.
 */
function closestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const option of issue.errors) {
    const first = option[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  if (!best) return issue;
  const missing = best.code === 'invalid_type' && best.message.endsWith('received undefined');
  if (best.path.length === 0 && !missing) return issue;
  return closestIssue({ ...best, path: [...issue.path, ...best.path] });
}

function describeIssue(issue: z.core.$ZodIssue, param: string): string {
  const field = param || 'the body';
  switch (issue.code) {
    case 'invalid_type':
      if (issue.message.endsWith('received undefined')) return `${field} is required`;
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
      if (issue.errors.length === 0) return `${field} ${issue.message}`;
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

/** Parses one ComputerAction, answering an unknown type with the list of known ones. */
export function parseComputerAction(input: unknown, prefix = ''): ComputerAction {
  const type = (input as { type?: unknown } | null)?.type;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const field = prefix.replace(/\.$/, '');
    throw invalidRequest(
      `${field || 'the action'} must be an object with a type`,
      field || undefined,
    );
  }
  if (typeof type !== 'string' || !ACTION_TYPES.includes(type as ActionType)) {
    const what =
      typeof type === 'string' ? `unknown action type "${type}"` : 'the action type is required';
    throw invalidRequest(`${what}; known types: ${ACTION_TYPES.join(', ')}`, `${prefix}type`);
  }
  return parseWith(ACTION_SCHEMAS[type as ActionType], input, prefix) as ComputerAction;
}
