import type { OutputAction } from '../../../../shared/responses.js';
import { splitKeyCombo } from '../../keyboard/key-names.js';
import { ModelError, type ComputerToolSpec } from '../model-provider.js';
import { modelKey } from './model-key-aliases.js';

/** An action object as OpenAI writes it (`computer_call.action`, or one of `actions`). */
export type OpenAIAction = Record<string, unknown>;

/** Benchtop's canonical key names as OpenAI's own examples spell them ("CTRL", "ESC"). */
const OPENAI_KEY_NAMES: Record<string, string> = { control: 'CTRL', escape: 'ESC', meta: 'CMD' };

const BUTTONS: Record<string, NonNullable<OutputAction['button']>> = {
  left: 'left',
  right: 'right',
  wheel: 'middle',
  middle: 'middle',
  back: 'back',
  forward: 'forward',
};

/** Mouse actions that may carry `keys`: modifiers held for the duration of the action. */
const HOLDS_KEYS = new Set(['click', 'double_click', 'drag', 'move', 'scroll']);

function badAnswer(message: string, raw: unknown): ModelError {
  const json = JSON.stringify(raw) ?? String(raw);
  const shown = json.length > 200 ? `${json.slice(0, 200)}…` : json;
  return new ModelError('bad_answer', `OpenAI sent ${message}: ${shown}`);
}

/**
 * One OpenAI computer action as Benchtop actions, in pixels of `display`. Usually one action;
 * modifiers held during a mouse action become key_down … key_up around it.
 */
export function fromOpenAIAction(raw: unknown, display: ComputerToolSpec | null): OutputAction[] {
  if (!raw || typeof raw !== 'object' || typeof (raw as OpenAIAction).type !== 'string') {
    throw badAnswer('a computer action without a type', raw);
  }
  const action = raw as OpenAIAction;
  const main = translate(action, display);
  const held = action.keys === undefined || action.keys === null ? [] : action.keys;
  if (!HOLDS_KEYS.has(action.type as string) || (Array.isArray(held) && held.length === 0)) {
    return [main];
  }
  const keys = toBenchtopKeys(held, action);
  return [
    ...keys.map((key): OutputAction => ({ type: 'key_down', keys: [key] })),
    main,
    ...keys.reverse().map((key): OutputAction => ({ type: 'key_up', keys: [key] })),
  ];
}

function translate(action: OpenAIAction, display: ComputerToolSpec | null): OutputAction {
  const at = () => point(action, 'x', 'y', display);
  switch (action.type) {
    case 'click':
      return { type: 'click', ...at(), button: button(action) };
    case 'double_click':
      return { type: 'double_click', ...at(), button: 'left' };
    case 'drag':
      return drag(action, display);
    case 'keypress':
      return { type: 'keypress', keys: toBenchtopKeys(action.keys, action) };
    case 'move':
      return { type: 'move', ...at() };
    case 'scroll':
      return {
        type: 'scroll',
        ...at(),
        scroll_x: integer(action, 'scroll_x'),
        scroll_y: integer(action, 'scroll_y'),
      };
    case 'type':
      if (typeof action.text !== 'string') throw badAnswer('a type action without text', action);
      return { type: 'type', text: action.text };
    case 'screenshot':
      // The client answers every computer_call with a fresh screenshot anyway.
      return { type: 'wait', ms: 0 };
    case 'wait': {
      const ms = action.ms;
      return { type: 'wait', ms: typeof ms === 'number' && ms >= 0 ? Math.round(ms) : 1000 };
    }
    default:
      throw badAnswer(
        `a computer action Benchtop does not know ("${String(action.type)}")`,
        action,
      );
  }
}

function button(action: OpenAIAction): NonNullable<OutputAction['button']> {
  const name = action.button ?? 'left';
  const mapped = typeof name === 'string' ? BUTTONS[name] : undefined;
  if (!mapped) throw badAnswer(`a click with an unknown button`, action);
  return mapped;
}

function drag(action: OpenAIAction, display: ComputerToolSpec | null): OutputAction {
  const path = action.path;
  if (!Array.isArray(path) || path.length < 2) {
    throw badAnswer('a drag without a path of at least two points', action);
  }
  const from = point(path[0] as OpenAIAction, 'x', 'y', display, action);
  const to = point(path[path.length - 1] as OpenAIAction, 'x', 'y', display, action);
  return { type: 'drag', ...from, end_x: to.x, end_y: to.y };
}

function point(
  source: OpenAIAction,
  xKey: string,
  yKey: string,
  display: ComputerToolSpec | null,
  whole: OpenAIAction = source,
): { x: number; y: number } {
  const coordinate = (key: string, size: number | undefined) => {
    const value = source && typeof source === 'object' ? source[key] : undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw badAnswer(`a ${String(whole.type)} action without a numeric ${key}`, whole);
    }
    const pixel = Math.round(value);
    // A model that points a pixel past the edge means the edge.
    return size === undefined ? pixel : Math.min(size - 1, Math.max(0, pixel));
  };
  return { x: coordinate(xKey, display?.width), y: coordinate(yKey, display?.height) };
}

function integer(action: OpenAIAction, key: string): number {
  const value = action[key] ?? 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw badAnswer(`a ${String(action.type)} action with a non-numeric ${key}`, action);
  }
  return Math.round(value);
}

/** OpenAI key names ("CTRL", "ARROWLEFT", "Return", "ctrl+shift+t", "Page_Down") as Benchtop's. */
export function toBenchtopKeys(keys: unknown, action: OpenAIAction): string[] {
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string')) {
    throw badAnswer(`a ${String(action.type)} action without a list of key names`, action);
  }
  return (keys as string[]).flatMap((entry) =>
    splitKeyCombo(entry).map((name) => {
      try {
        return modelKey(name, { lowercaseCapitals: true });
      } catch {
        // Reported as the model's mistake, not the client's.
        throw badAnswer(`a key name Benchtop does not know ("${name}")`, action);
      }
    }),
  );
}

/**
 * A Benchtop action in OpenAI's shape, for sending earlier turns back; null when OpenAI's
 * computer tool has no such action (the caller then describes it in text).
 */
export function toOpenAIAction(action: OutputAction): OpenAIAction | null {
  const { x, y } = action;
  const hasPoint = x !== undefined && y !== undefined;
  switch (action.type) {
    case 'click':
    case 'right_click': {
      const name = action.type === 'right_click' ? 'right' : (action.button ?? 'left');
      return hasPoint ? { type: 'click', button: name === 'middle' ? 'wheel' : name, x, y } : null;
    }
    case 'double_click':
      return hasPoint ? { type: 'double_click', x, y } : null;
    case 'move':
      return hasPoint ? { type: 'move', x, y } : null;
    case 'drag':
      if (!hasPoint || action.end_x === undefined || action.end_y === undefined) return null;
      return {
        type: 'drag',
        path: [
          { x, y },
          { x: action.end_x, y: action.end_y },
        ],
      };
    case 'scroll':
    case 'hscroll':
      if (!hasPoint) return null;
      return {
        type: 'scroll',
        x,
        y,
        scroll_x: action.scroll_x ?? 0,
        scroll_y: action.scroll_y ?? 0,
      };
    case 'type':
      return action.text === undefined ? null : { type: 'type', text: action.text };
    case 'key':
    case 'keypress':
      return openAIKeypress(action);
    case 'wait':
      return action.ms === 0 ? { type: 'screenshot' } : { type: 'wait' };
    default:
      return null;
  }
}

function openAIKeypress(action: OutputAction): OpenAIAction | null {
  try {
    const keys = toBenchtopKeys(action.keys, { type: action.type });
    return {
      type: 'keypress',
      keys: keys.map((key) => OPENAI_KEY_NAMES[key] ?? key.toUpperCase()),
    };
  } catch {
    return null;
  }
}
