import type { OutputAction } from '../../../shared/responses.js';

/** One line a person reads for a model's action: "click at 120, 340", "type “hello”". */
export function describeAction(action: OutputAction): string {
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
