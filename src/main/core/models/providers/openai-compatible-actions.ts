import { MAX_WAIT_MS } from '../../../../shared/actions.js';
import { OUTPUT_ACTION_TYPES, type OutputAction } from '../../../../shared/responses.js';
import { ModelError, scaleFrom999, type ComputerToolSpec } from '../model-provider.js';
import { modelKeys } from './model-key-aliases.js';

/** Arguments of the `computer` tool as a model gives them: coordinates on the 0–999 grid. */
export type ActionArgs = Record<string, unknown>;

/** What a translation needs: the display the pixels belong to, and who to blame in errors. */
export type ActionContext = { display: ComputerToolSpec; who: string };

type Kind = OutputAction['type'];
type Alias = { type: Kind; fixed?: ActionArgs };

/** Models trained on other action vocabularies (UI-TARS, Qwen computer_use, xdotool habits). */
const ALIASES: Record<string, Alias> = {
  left_click: { type: 'click' },
  left_single: { type: 'click' },
  tap: { type: 'click' },
  middle_click: { type: 'click', fixed: { button: 'middle' } },
  left_double: { type: 'double_click' },
  doubleclick: { type: 'double_click' },
  left_triple: { type: 'triple_click' },
  right_single: { type: 'right_click' },
  mouse_move: { type: 'move' },
  hover: { type: 'move' },
  left_click_drag: { type: 'drag' },
  select: { type: 'drag' },
  type_text: { type: 'type' },
  hotkey: { type: 'keypress' },
  press: { type: 'keypress' },
  keydown: { type: 'key_down' },
  keyup: { type: 'key_up' },
  release: { type: 'key_up' },
  open_url: { type: 'navigate' },
  goto: { type: 'navigate' },
  go_to_url: { type: 'navigate' },
  sleep: { type: 'wait' },
  finished: { type: 'done' },
  // The client answers every call with a fresh screenshot, so asking for one is a zero wait.
  screenshot: { type: 'wait', fixed: { ms: 0 } },
};
const TYPES: ReadonlySet<string> = new Set(OUTPUT_ACTION_TYPES);
const BUTTONS = new Set(['left', 'right', 'middle', 'wheel', 'back', 'forward']);

export function isActionName(name: string): boolean {
  const key = name.toLowerCase().replace(/[\s-]/g, '_');
  return TYPES.has(key) || Object.hasOwn(ALIASES, key);
}

/** Turns the model's action arguments (0–999 grid) into a contract action in display pixels. */
export function toAction(raw: ActionArgs, context: ActionContext): OutputAction {
  const name = text(raw.action) ?? text(raw.type);
  const key = name?.toLowerCase().replace(/[\s-]/g, '_') ?? '';
  const alias: Alias | undefined = TYPES.has(key)
    ? { type: key as Kind }
    : Object.hasOwn(ALIASES, key)
      ? ALIASES[key]
      : undefined;
  if (!alias) {
    const what = name ? `an unknown computer action "${name}"` : 'a computer action without a type';
    throw badAnswer(context, what, raw);
  }
  const args = withPoints({ ...raw, ...alias.fixed }, context);
  return build(alias.type, args, context);
}

function build(type: Kind, args: ActionArgs, context: ActionContext): OutputAction {
  const need = (field: string): never => {
    throw badAnswer(context, `a "${type}" action without ${field}`, args);
  };
  const at = () => point(args, 'x', 'y') ?? need('x and y');
  switch (type) {
    case 'click':
    case 'mouse_down':
    case 'mouse_up':
      return { type, ...at(), button: button(args, context) ?? 'left' };
    case 'double_click':
    case 'triple_click':
      return { type, ...at(), button: 'left' };
    case 'right_click':
      return { type, ...at(), button: 'right' };
    case 'move':
      return { type, ...at() };
    case 'drag': {
      const end = point(args, 'end_x', 'end_y') ?? need('end_x and end_y');
      return { type, ...at(), end_x: end.x, end_y: end.y };
    }
    case 'scroll':
    case 'hscroll':
      return scroll(type, args, context) ?? need('scroll_x, scroll_y or a direction');
    case 'type': {
      const typed = text(args.text) ?? text(args.content);
      return typed ? { type, text: typed } : need('text');
    }
    case 'key':
    case 'keypress':
      return { type, keys: keys(args, context) ?? need('keys') };
    case 'key_down':
    case 'key_up':
      return { type, keys: oneKey(args, context) ?? need('exactly one key') };
    case 'navigate':
      return { type, url: text(args.url) ?? need('url') };
    case 'wait':
      return { type, ms: waitMs(args) };
    case 'done':
    case 'answer':
    case 'terminate':
      return finish(type, args);
  }
}

/** Reads `coordinate`, `start_box`, `point`… into x/y and end_x/end_y, then scales to pixels. */
function withPoints(args: ActionArgs, context: ActionContext): ActionArgs {
  const out = { ...args };
  const start = pair(args.coordinate ?? args.start_box ?? args.start_point ?? args.point, context);
  const end = pair(args.end_coordinate ?? args.end_box ?? args.end_point, context);
  if (start) [out.x, out.y] = start;
  if (end) [out.end_x, out.end_y] = end;
  const { width, height } = context.display;
  for (const [field, size] of [
    ['x', width],
    ['y', height],
    ['end_x', width],
    ['end_y', height],
  ] as const) {
    if (out[field] === undefined) continue;
    const value = number(out[field]);
    if (value === undefined) throw badAnswer(context, `a non-numeric ${field}`, args);
    out[field] = scaleFrom999(value, size);
  }
  return out;
}

/** [x, y] from an array, "(x,y)", "<point>x y</point>" or a box "[x1,y1,x2,y2]" (its centre). */
function pair(value: unknown, context: ActionContext): [number, number] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const numbers = Array.isArray(value)
    ? value.map(number)
    : typeof value === 'string'
      ? (value.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number)
      : [];
  const [a, b, c, d] = numbers;
  if (numbers.length === 2 && a !== undefined && b !== undefined) return [a, b];
  if (numbers.length === 4 && a !== undefined && b !== undefined && c !== undefined) {
    if (d !== undefined) return [(a + c) / 2, (b + d) / 2];
  }
  throw badAnswer(context, `a point Benchtop cannot read (${JSON.stringify(value)})`, value);
}

function point(args: ActionArgs, xField: string, yField: string) {
  const x = args[xField];
  const y = args[yField];
  return typeof x === 'number' && typeof y === 'number' ? { x, y } : undefined;
}

/**
 * Scroll amounts are pixels and are not scaled. A direction without an amount scrolls half the
 * display along that axis: far enough to show new content, with overlap to keep one's place.
 */
function scroll(type: 'scroll' | 'hscroll', args: ActionArgs, context: ActionContext) {
  const { width, height } = context.display;
  let dx = number(args.scroll_x);
  let dy = number(args.scroll_y);
  // Qwen's computer_use counts `pixels` upwards.
  const up = number(args.pixels);
  if (dx === undefined && dy === undefined && up !== undefined) {
    if (type === 'hscroll') dx = up;
    else dy = -up;
  }
  const direction = text(args.direction)?.toLowerCase();
  if (dx === undefined && dy === undefined && direction) {
    const amount = number(args.amount);
    const vertical = amount ?? Math.round(height / 2);
    const horizontal = amount ?? Math.round(width / 2);
    if (direction === 'down') dy = vertical;
    else if (direction === 'up') dy = -vertical;
    else if (direction === 'right') dx = horizontal;
    else if (direction === 'left') dx = -horizontal;
    else throw badAnswer(context, `a scroll towards "${direction}"`, args);
  }
  if (dx === undefined && dy === undefined) return undefined;
  const centre = { x: Math.round((width - 1) / 2), y: Math.round((height - 1) / 2) };
  const at = point(args, 'x', 'y') ?? centre;
  const out: OutputAction = { type, ...at };
  if (dx !== undefined) out.scroll_x = Math.round(dx);
  if (type === 'scroll' || dy !== undefined) out.scroll_y = Math.round(dy ?? 0);
  return out;
}

function keys(args: ActionArgs, context: ActionContext): string[] | undefined {
  const given = args.keys ?? args.key ?? args.hotkey ?? args.text;
  const list = typeof given === 'string' ? [given] : Array.isArray(given) ? given : [];
  const names = list.map((entry) => {
    if (typeof entry !== 'string' || !entry.trim()) throw badAnswer(context, 'an empty key', args);
    return keyNames(entry.trim(), context);
  });
  return names.length ? names.flat() : undefined;
}

function oneKey(args: ActionArgs, context: ActionContext): string[] | undefined {
  const names = keys(args, context);
  return names?.length === 1 ? names : undefined;
}

/** Benchtop key names for "ctrl+shift+t", "ctrl c" (UI-TARS), "Page_Down", "Control_L", "Prior"… */
export function keyNames(entry: string, context: Pick<ActionContext, 'who'>): string[] {
  try {
    // A '+' ending a name is no separator here: "ctrl +" is UI-TARS's ctrl and plus.
    if (/[^+]\+$/.test(entry)) throw new Error('not a combination');
    return modelKeys(entry);
  } catch {
    try {
      return entry.split(/\s+/).flatMap((part) => modelKeys(part));
    } catch {
      throw badAnswer(context, `an unknown key "${entry}"`, entry);
    }
  }
}

function button(args: ActionArgs, context: ActionContext): OutputAction['button'] {
  const given = text(args.button)?.toLowerCase();
  if (given === undefined) return undefined;
  if (!BUTTONS.has(given)) throw badAnswer(context, `the mouse button "${given}"`, args);
  return given as OutputAction['button'];
}

function waitMs(args: ActionArgs): number {
  const seconds = number(args.time) ?? number(args.seconds);
  const ms = number(args.ms) ?? (seconds === undefined ? 1000 : seconds * 1000);
  return Math.round(Math.min(MAX_WAIT_MS, Math.max(0, ms)));
}

function finish(type: 'done' | 'answer' | 'terminate', args: ActionArgs): OutputAction {
  const out: OutputAction = { type };
  const status = text(args.status);
  const result = [args.result, args.content, args.answer, args.text].find(
    (value) => typeof value === 'string',
  ) as string | undefined;
  if (status) out.status = status;
  if (result !== undefined) out.result = result;
  return out;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function number(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

export function badAnswer(context: Pick<ActionContext, 'who'>, what: string, given: unknown) {
  return new ModelError('bad_answer', `${context.who} answered with ${what}: ${preview(given)}`);
}

export function preview(value: unknown): string {
  const shown = (typeof value === 'string' ? value : JSON.stringify(value)) ?? String(value);
  const flat = shown.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
