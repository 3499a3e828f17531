import type { OutputAction } from '../../../../shared/responses.js';
import { ModelError, type ConversationItem } from '../model-provider.js';
import { keysFromXdotool, xdotoolFromKeys } from './anthropic-key-names.js';

/**
 * The display in the computer's pixels and in the model's: a screenshot beyond the API's image
 * limit is sent scaled down (the API would shrink it anyway, and Claude then answers in the
 * shrunk image's pixels), and the tool declares the scaled size.
 */
export type Screen = { width: number; height: number; modelWidth: number; modelHeight: number };

/** One notch of a wheel in pixels, as Chromium scrolls: `scroll_amount` counts notches. */
export const SCROLL_PX_PER_CLICK = 100;

type Point = { x: number; y: number };
type Input = Record<string, unknown>;
const DIRECTIONS = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] } as const;

/**
 * Reads Claude's computer actions into Lightcone actions in the computer's pixels. Anthropic's
 * clicks, scrolls and mouse-down/up may leave out the coordinate to mean "where the pointer is",
 * so the reader follows the pointer from the conversation's earlier actions.
 */
export class ActionReader {
  private pointer: Point | null;

  constructor(
    private readonly screen: Screen,
    conversation: ConversationItem[],
  ) {
    this.pointer = lastPointer(conversation);
  }

  read(input: unknown): OutputAction[] {
    if (!isRecord(input) || typeof input.action !== 'string') {
      throw badAction(input, 'it names no action');
    }
    const actions = this.translate(input.action, input);
    for (const action of actions) this.pointer = pointerAfter(action) ?? this.pointer;
    return actions;
  }

  private translate(name: string, input: Input): OutputAction[] {
    switch (name) {
      case 'left_click':
        return [this.click(input, 'click', 'left')];
      case 'right_click':
        return [this.click(input, 'click', 'right')];
      case 'middle_click':
        return [this.click(input, 'click', 'middle')];
      case 'double_click':
      case 'triple_click':
        return [this.click(input, name, 'left')];
      case 'mouse_move':
        return [{ type: 'move', ...this.point(input, 'coordinate') }];
      case 'left_click_drag':
        return [this.drag(input)];
      case 'left_mouse_down':
        return [{ type: 'mouse_down', button: 'left', ...this.at(input) }];
      case 'left_mouse_up':
        return [{ type: 'mouse_up', button: 'left', ...this.at(input) }];
      case 'type':
        return [{ type: 'type', text: this.text(input) }];
      case 'key':
        return this.combos(input).map((keys) => ({ type: 'keypress', keys }));
      case 'hold_key':
        // A key_down would stay held: Claude never sends the release. Press it once instead.
        return [{ type: 'keypress', keys: this.combos(input).flat() }];
      case 'scroll':
        return [this.scroll(input)];
      case 'wait':
        return [{ type: 'wait', ms: this.seconds(input) * 1000 }];
      case 'screenshot':
      case 'cursor_position':
        return [{ type: 'wait', ms: 0 }];
      default:
        throw badAction(input, `Benchtop does not know the action "${name}"`);
    }
  }

  private click(input: Input, type: 'click' | 'double_click' | 'triple_click', button: string) {
    const modifier = this.modifier(input);
    return { type, button, ...this.at(input), ...(modifier && { keys: modifier }) } as OutputAction;
  }

  private drag(input: Input): OutputAction {
    const start =
      input.start_coordinate === undefined
        ? this.current(input)
        : this.point(input, 'start_coordinate');
    const end = this.point(input, 'coordinate');
    return { type: 'drag', ...start, end_x: end.x, end_y: end.y };
  }

  private scroll(input: Input): OutputAction {
    const direction = input.scroll_direction;
    if (typeof direction !== 'string' || !Object.hasOwn(DIRECTIONS, direction)) {
      throw badAction(input, 'scroll_direction is not up, down, left or right');
    }
    const amount = input.scroll_amount;
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
      throw badAction(input, 'scroll_amount is not a number of wheel clicks');
    }
    const [dx, dy] = DIRECTIONS[direction as keyof typeof DIRECTIONS];
    const pixels = Math.round(amount * SCROLL_PX_PER_CLICK);
    const modifier = this.modifier(input);
    return {
      type: 'scroll',
      ...this.at(input),
      scroll_x: dx * pixels,
      scroll_y: dy * pixels,
      ...(modifier && { keys: modifier }),
    };
  }

  /** The coordinate when given, else where the pointer is. */
  private at(input: Input): Point {
    return input.coordinate === undefined ? this.current(input) : this.point(input, 'coordinate');
  }

  private current(input: Input): Point {
    if (!this.pointer) {
      throw badAction(input, 'it gives no coordinate and the pointer position is not known yet');
    }
    return this.pointer;
  }

  private point(input: Input, field: string): Point {
    const value = input[field];
    const valid =
      Array.isArray(value) &&
      value.length === 2 &&
      value.every((n) => typeof n === 'number' && Number.isFinite(n));
    if (!valid) throw badAction(input, `${field} is not an [x, y] pair of numbers`);
    const [x, y] = value as [number, number];
    const { width, height, modelWidth, modelHeight } = this.screen;
    return { x: toScreen(x, width, modelWidth), y: toScreen(y, height, modelHeight) };
  }

  private text(input: Input): string {
    if (typeof input.text !== 'string') throw badAction(input, 'text is not a string');
    return input.text;
  }

  /** `key` presses combinations one after another when it lists several: "ctrl+a Delete". */
  private combos(input: Input): string[][] {
    const text = this.text(input);
    const combos = [...text].length === 1 ? [text] : text.trim().split(/\s+/);
    return combos.map((combo) => {
      const keys = keysFromXdotool(combo);
      if (!keys) throw badAction(input, `"${combo}" is not a key Benchtop knows`);
      return keys;
    });
  }

  /** Keys held during a click or scroll: `text` in the docs, `key` in Anthropic's own demo. */
  private modifier(input: Input): string[] | undefined {
    const value = input.text ?? input.key;
    if (value === undefined || value === null || value === '') return undefined;
    const keys = typeof value === 'string' ? keysFromXdotool(value) : null;
    if (!keys)
      throw badAction(input, `the held key ${JSON.stringify(value)} is not one Benchtop knows`);
    return keys;
  }

  private seconds(input: Input): number {
    const value = input.duration;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw badAction(input, 'duration is not a number of seconds');
    }
    return value;
  }
}

function toScreen(value: number, size: number, modelSize: number): number {
  return Math.min(size - 1, Math.max(0, Math.round((value * size) / modelSize)));
}

function fromScreen(value: number, size: number, modelSize: number): number {
  return Math.round((value * modelSize) / size);
}

function badAction(input: unknown, reason: string): ModelError {
  let text = JSON.stringify(input) ?? String(input);
  if (text.length > 200) text = `${text.slice(0, 200)}…`;
  return new ModelError(
    'bad_answer',
    `Anthropic answered a computer action Benchtop cannot perform (${reason}): ${text}`,
  );
}

function isRecord(value: unknown): value is Input {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pointerAfter(action: OutputAction): Point | null {
  if (action.end_x !== undefined && action.end_y !== undefined) {
    return { x: action.end_x, y: action.end_y };
  }
  if (action.x !== undefined && action.y !== undefined) return { x: action.x, y: action.y };
  return null;
}

function lastPointer(conversation: ConversationItem[]): Point | null {
  for (let index = conversation.length - 1; index >= 0; index--) {
    const item = conversation[index]!;
    const point = item.type === 'computer_call' ? pointerAfter(item.action) : null;
    if (point) return point;
  }
  return null;
}

/**
 * An earlier action as the `input` of Claude's computer tool, in the model's pixels; null when
 * the tool has no such action (navigate, key_down, answer…: the history tells those in words).
 */
export function anthropicInput(action: OutputAction, screen: Screen): Input | null {
  const sx = (x: number | undefined) => fromScreen(x ?? 0, screen.width, screen.modelWidth);
  const sy = (y: number | undefined) => fromScreen(y ?? 0, screen.height, screen.modelHeight);
  const coordinate = [sx(action.x), sy(action.y)];
  const held = action.keys?.length ? { text: xdotoolFromKeys(action.keys) } : {};
  switch (action.type) {
    case 'click': {
      const name = clickName(action.button);
      return name ? { action: name, coordinate, ...held } : null;
    }
    case 'double_click':
    case 'triple_click':
    case 'right_click':
      return { action: action.type, coordinate, ...held };
    case 'move':
      return { action: 'mouse_move', coordinate };
    case 'drag':
      return {
        action: 'left_click_drag',
        start_coordinate: coordinate,
        coordinate: [sx(action.end_x), sy(action.end_y)],
      };
    case 'mouse_down':
    case 'mouse_up':
      return (action.button ?? 'left') === 'left' ? { action: `left_${action.type}` } : null;
    case 'type':
      return { action: 'type', text: action.text ?? '' };
    case 'key':
    case 'keypress':
      return { action: 'key', text: xdotoolFromKeys(action.keys ?? []) };
    case 'scroll':
    case 'hscroll':
      return { action: 'scroll', coordinate, ...scrollOf(action), ...held };
    case 'wait':
      return action.ms ? { action: 'wait', duration: action.ms / 1000 } : { action: 'screenshot' };
    default:
      return null;
  }
}

function clickName(button: OutputAction['button']): string | null {
  if (button === undefined || button === 'left') return 'left_click';
  if (button === 'right') return 'right_click';
  if (button === 'middle' || button === 'wheel') return 'middle_click';
  return null;
}

function scrollOf(action: OutputAction) {
  const dx = action.scroll_x ?? 0;
  const dy = action.type === 'hscroll' ? 0 : (action.scroll_y ?? 0);
  const horizontal = Math.abs(dx) > Math.abs(dy);
  const pixels = horizontal ? dx : dy;
  return {
    scroll_direction: horizontal ? (dx < 0 ? 'left' : 'right') : dy < 0 ? 'up' : 'down',
    scroll_amount: Math.max(
      pixels === 0 ? 0 : 1,
      Math.round(Math.abs(pixels) / SCROLL_PX_PER_CLICK),
    ),
  };
}
