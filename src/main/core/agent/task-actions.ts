import { ACTION_SCHEMAS, type ComputerAction } from '../../../shared/actions.js';
import type { OutputAction } from '../../../shared/responses.js';

/**
 * A model's action (API.md §9 shape, pixels) as the ComputerAction the action runner performs,
 * checked against the same schemas as /execute; a readable error when it cannot be performed.
 */
export function toComputerAction(
  action: OutputAction,
): { action: ComputerAction } | { error: string } {
  const wire = wireOf(action);
  const schema = ACTION_SCHEMAS[wire.type as keyof typeof ACTION_SCHEMAS];
  if (!schema) return { error: `${action.type} is not an action a computer can perform` };
  const parsed = schema.safeParse(wire);
  if (parsed.success) return { action: parsed.data as ComputerAction };
  const issue = parsed.error.issues[0]!;
  return { error: `${action.type} is missing or has a bad ${issue.path.join('.') || 'field'}` };
}

function wireOf(action: OutputAction): Record<string, unknown> {
  const { type, x, y } = action;
  switch (type) {
    case 'click':
    case 'mouse_down':
    case 'mouse_up':
      return { type, x, y, button: action.button };
    case 'double_click':
    case 'triple_click':
    case 'right_click':
    case 'move':
      return { type, x, y };
    case 'type':
      return x !== undefined && y !== undefined
        ? { type: 'point_and_type', x, y, text: action.text }
        : { type, text: action.text };
    case 'key':
    case 'keypress':
      return { type: 'keypress', keys: action.keys ?? (action.text ? [action.text] : undefined) };
    case 'key_down':
    case 'key_up':
      return { type, keys: action.keys ?? (action.text ? [action.text] : undefined) };
    case 'scroll':
    case 'hscroll':
      return {
        type: 'scroll',
        x,
        y,
        scroll_x: action.scroll_x ?? 0,
        scroll_y: action.scroll_y ?? 0,
      };
    case 'drag':
      return { type, x1: x, y1: y, x2: action.end_x, y2: action.end_y };
    case 'navigate':
      return { type, url: action.url };
    case 'wait':
      return { type, ms: action.ms ?? 1000 };
    default:
      return { type };
  }
}
