import type { OutputAction } from './responses.js';

/**
 * How actions read to a person, the same in the window (task page, recordings view) and in a
 * task bundle's offline viewer.
 */

/** One line a person reads for a model's action: "click at 120, 340", "type “hello”". */
export function describeModelAction(action: OutputAction): string {
  const at = action.x !== undefined && action.y !== undefined ? ` at ${action.x}, ${action.y}` : '';
  switch (action.type) {
    case 'type':
      return `type “${action.text ?? ''}”`;
    case 'key':
    case 'keypress':
    case 'key_down':
    case 'key_up':
      return `${action.type.replace('_', ' ')} ${(action.keys ?? []).join('+')}`;
    case 'scroll':
    case 'hscroll':
      return `scroll${at} by ${action.scroll_x ?? 0}, ${action.scroll_y ?? 0}`;
    case 'drag':
      return `drag from ${action.x}, ${action.y} to ${action.end_x}, ${action.end_y}`;
    case 'navigate':
      return `go to ${action.url ?? ''}`;
    case 'wait':
      return `wait ${action.ms ?? 1000} ms`;
    case 'answer':
    case 'done':
    case 'terminate':
      return `${action.type}${action.result ? `: ${action.result}` : ''}`;
    default:
      return `${action.type.replace('_', ' ')}${at}`;
  }
}

/** An action as the computer ran it (an action_request event's `action`: coordinates as `at`). */
export type RanAction = { type: string; [field: string]: unknown };

/**
 * One line for an action as the server ran it (aliases resolved, points as `at`): "click at 150,
 * 130", "right click at 5, 6", "type “hi”", "keypress Control+A".
 */
export function describeRanAction(action: RanAction): string {
  const point = coords(action.at);
  const at = point ? ` at ${point}` : '';
  switch (action.type) {
    case 'click': {
      const count = action.count === 2 ? 'double ' : action.count === 3 ? 'triple ' : '';
      const button = str(action.button) === 'left' ? '' : `${str(action.button)} `.trimStart();
      return `${count}${button}click${at}`;
    }
    case 'type':
    case 'point_and_type':
      return `type “${str(action.text)}”${at}`;
    case 'keypress':
      return `keypress ${Array.isArray(action.keys) ? action.keys.join('+') : ''}`;
    case 'key_down':
    case 'key_up':
      return `${action.type.replace('_', ' ')} ${str(action.key)}`;
    case 'scroll':
      return `scroll${at} by ${num(action.dx)}, ${num(action.dy)}`;
    case 'drag': {
      const path = Array.isArray(action.path) ? (action.path as unknown[]) : [];
      return `drag from ${coords(path[0]) ?? '?'} to ${coords(path.at(-1)) ?? '?'}`;
    }
    case 'navigate':
      return `go to ${str(action.url)}`;
    case 'new_tab':
      return `new tab ${str(action.url)}`.trim();
    case 'wait':
      return `wait ${num(action.ms)} ms`;
    case 'finish':
      return [str(action.signal) || 'finish', str(action.result)].filter(Boolean).join(': ');
    default:
      return `${action.type.replaceAll('_', ' ')}${at}`;
  }
}

/** "150, 130" for a point, undefined for anything else. */
function coords(point: unknown): string | undefined {
  if (typeof point !== 'object' || point === null) return undefined;
  const { x, y } = point as { x?: unknown; y?: unknown };
  return typeof x === 'number' && typeof y === 'number' ? `${x}, ${y}` : undefined;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
