import { ACTION_SCHEMAS, type ComputerAction } from '../../../shared/actions.js';
import type { z } from 'zod';
import type { OutputAction } from '../../../shared/responses.js';

const KEY_ACTIONS = new Set(['key', 'keypress', 'key_down', 'key_up']);

/**
 * A model's action (the contract's shape, pixels) as the ComputerAction the action runner
 * performs: every type /v1/responses emits is one /batch accepts, checked by the same schemas;
 * a readable error when it cannot be performed.
 */
export function toComputerAction(
  action: OutputAction,
): { action: ComputerAction } | { error: string } {
  const schema = (ACTION_SCHEMAS as Record<string, z.ZodType | undefined>)[action.type];
  if (!schema) return { error: `${action.type} is not an action a computer can perform` };
  // Some models name a single key as text.
  const wire =
    KEY_ACTIONS.has(action.type) && !action.keys && action.text
      ? { ...action, keys: [action.text] }
      : action;
  const parsed = schema.safeParse(wire);
  if (parsed.success) return { action: parsed.data as ComputerAction };
  const issue = parsed.error.issues[0]!;
  return { error: `${action.type} is missing or has a bad ${issue.path.join('.') || 'field'}` };
}
