import { MAX_WAIT_MS } from '../../../../shared/actions.js';
import type { OutputAction } from '../../../../shared/responses.js';
import { splitKeyCombo } from '../../keyboard/key-names.js';
import { ModelError, scaleFrom999, type ComputerToolSpec } from '../model-provider.js';
import { detail } from '../provider-http.js';
import { modelKey } from './model-key-aliases.js';

/**
 * Northstar's computer actions ↔ the contract's. Northstar places points in a 0–999
 * space over the screenshot (its docs say "0–1000"; 1000 is clamped to the last pixel), writes keys
 * as lists, "ctrl+c" strings or JSON-encoded lists, and names drag ends x1/y1/x2/y2, end_x/end_y
 * or a path. Scroll amounts are pixels and are never scaled.
 */

type Raw = Record<string, unknown>;
type Display = Pick<ComputerToolSpec, 'width' | 'height'>;
type Button = NonNullable<OutputAction['button']>;
type Translate = (raw: Raw, display: Display) => OutputAction;

const BUTTONS: ReadonlySet<string> = new Set([
  'left',
  'right',
  'middle',
  'wheel',
  'back',
  'forward',
]);
/** Where a scroll without a position happens: the middle of the screen, as Lightcone's agent does. */
const CENTRE = 499.5;
const DEFAULT_WAIT_MS = 1000;

function malformed(raw: unknown, why: string): ModelError {
  return new ModelError(
    'bad_answer',
    `the Lightcone cloud returned a computer action Benchtop cannot perform (${why}): ${detail({ secrets: [] }, JSON.stringify(raw) ?? String(raw))}`,
  );
}

function number(raw: Raw, field: string): number | undefined {
  const value = raw[field];
  if (value === undefined || value === null) return undefined;
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isFinite(parsed)) {
    throw malformed(raw, `${field} is not a number`);
  }
  return parsed;
}

function required(raw: Raw, field: string): number {
  const value = number(raw, field);
  if (value === undefined) throw malformed(raw, `${field} is missing`);
  return value;
}

function point(raw: Raw, display: Display, xField = 'x', yField = 'y') {
  return {
    x: scaleFrom999(required(raw, xField), display.width),
    y: scaleFrom999(required(raw, yField), display.height),
  };
}

function text(raw: Raw, field: string): string {
  const value = raw[field];
  if (typeof value !== 'string') throw malformed(raw, `${field} is not text`);
  return value;
}

function button(raw: Raw, fallback: Button): Button {
  const value = raw.button ?? fallback;
  if (typeof value !== 'string' || !BUTTONS.has(value)) {
    throw malformed(raw, `unknown mouse button ${JSON.stringify(value)}`);
  }
  return value as Button;
}

function drag(raw: Raw, display: Display): OutputAction {
  let ends: [Raw, string, string, Raw, string, string];
  if (Array.isArray(raw.path)) {
    const path = raw.path as unknown[];
    const first = path[0];
    const last = path[path.length - 1];
    if (path.length < 2 || !isRecord(first) || !isRecord(last)) {
      throw malformed(raw, 'a drag path needs two points');
    }
    ends = [first, 'x', 'y', last, 'x', 'y'];
  } else if (raw.x1 !== undefined) {
    ends = [raw, 'x1', 'y1', raw, 'x2', 'y2'];
  } else {
    ends = [raw, 'x', 'y', raw, 'end_x', 'end_y'];
  }
  const start = point(ends[0], display, ends[1], ends[2]);
  const end = point(ends[3], display, ends[4], ends[5]);
  return { type: 'drag', ...start, end_x: end.x, end_y: end.y };
}

function scroll(type: 'scroll' | 'hscroll') {
  return (raw: Raw, display: Display): OutputAction => {
    const dx = number(raw, 'scroll_x') ?? number(raw, 'dx');
    const dy = type === 'hscroll' ? undefined : (number(raw, 'scroll_y') ?? number(raw, 'dy'));
    if (dx === undefined && dy === undefined) throw malformed(raw, 'no scroll amount');
    const at = raw.x === undefined && raw.y === undefined ? { x: CENTRE, y: CENTRE } : raw;
    return {
      type,
      ...point(at, display),
      scroll_x: Math.round(dx ?? 0),
      scroll_y: Math.round(dy ?? 0),
    };
  };
}

/** Every spelling of a key list Northstar uses, flattened into Benchtop key names. */
function normalizeKeys(raw: Raw): string[] {
  const names = flattenKeys(raw.keys ?? raw.key, raw).flatMap(splitKeyCombo);
  if (names.length === 0) throw malformed(raw, 'no keys');
  return names.map((name) => {
    try {
      return modelKey(name);
    } catch {
      throw malformed(raw, `unknown key "${name}"`);
    }
  });
}

function flattenKeys(value: unknown, raw: Raw): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => flattenKeys(item, raw));
  if (typeof value !== 'string' || value === '') throw malformed(raw, 'keys are not text');
  if (value.trim().startsWith('[')) {
    try {
      return flattenKeys(JSON.parse(value), raw);
    } catch (error) {
      if (error instanceof ModelError) throw error;
    }
  }
  return [value];
}

function keys(type: OutputAction['type']): Translate {
  return (raw) => ({ type, keys: normalizeKeys(raw) });
}

function wait(raw: Raw): OutputAction {
  const ms = number(raw, 'ms');
  const seconds = number(raw, 'seconds') ?? number(raw, 'duration') ?? number(raw, 'time');
  const total = ms ?? (seconds === undefined ? DEFAULT_WAIT_MS : seconds * 1000);
  // A longer wait would be refused when the client performs it.
  return { type: 'wait', ms: Math.min(MAX_WAIT_MS, Math.max(0, Math.round(total))) };
}

function finish(type: 'terminate' | 'answer' | 'done'): Translate {
  return (raw) => {
    const status = typeof raw.status === 'string' && raw.status ? raw.status : 'success';
    const result = [raw.result, raw.answer, raw.text].find((v) => typeof v === 'string');
    return { type, status, ...(result === undefined ? {} : { result: result as string }) };
  };
}

function click(type: 'click' | 'double_click' | 'triple_click', fallback: Button): Translate {
  return (raw, display) => ({ type, ...point(raw, display), button: button(raw, fallback) });
}

function press(type: 'mouse_down' | 'mouse_up'): Translate {
  return (raw, display) => ({ type, ...point(raw, display), button: button(raw, 'left') });
}

const move: Translate = (raw, display) => ({ type: 'move', ...point(raw, display) });
const navigate: Translate = (raw) => ({ type: 'navigate', url: text(raw, 'url') });

const TRANSLATORS: Record<string, Translate> = {
  click: click('click', 'left'),
  left_click: click('click', 'left'),
  middle_click: click('click', 'middle'),
  double_click: click('double_click', 'left'),
  triple_click: click('triple_click', 'left'),
  right_click: (raw, display) => ({ type: 'right_click', ...point(raw, display), button: 'right' }),
  mouse_down: press('mouse_down'),
  mouse_up: press('mouse_up'),
  move,
  mouse_move: move,
  hover: move,
  drag,
  scroll: scroll('scroll'),
  hscroll: scroll('hscroll'),
  type: (raw) => ({ type: 'type', text: text(raw, 'text') }),
  // The contract has no point_and_type: a `type` with a position means "click there, then type".
  point_and_type: (raw, display) => ({
    type: 'type',
    ...point(raw, display),
    text: text(raw, 'text'),
  }),
  key: keys('key'),
  keypress: keys('keypress'),
  hotkey: keys('keypress'),
  key_down: keys('key_down'),
  key_up: keys('key_up'),
  navigate,
  open_page: navigate,
  go_to_url: navigate,
  wait,
  // The client answers every computer_call with a fresh screenshot anyway.
  screenshot: () => ({ type: 'wait', ms: 0 }),
  terminate: finish('terminate'),
  answer: finish('answer'),
  done: finish('done'),
};

/** One Northstar action in integer pixels of the display; anything unusable is a bad_answer. */
export function fromCloudAction(raw: unknown, display: Display): OutputAction {
  if (!isRecord(raw)) throw malformed(raw, 'not an object');
  const translate = typeof raw.type === 'string' ? TRANSLATORS[raw.type] : undefined;
  if (!translate) throw malformed(raw, `unknown action type ${JSON.stringify(raw.type)}`);
  return translate(raw, display);
}

/** pixel → 0–999, the inverse of scaleFrom999, for history sent back to Northstar. */
function to999(pixel: number, size: number): number {
  return size <= 1 ? 0 : Math.min(999, Math.max(0, Math.round((pixel * 999) / (size - 1))));
}

/** A contract action from the conversation, in Northstar's space, for the cloud's input. */
export function toCloudAction(action: OutputAction, display: Display): Raw {
  const out: Raw = { ...action };
  for (const [field, size] of [
    ['x', display.width],
    ['y', display.height],
    ['end_x', display.width],
    ['end_y', display.height],
  ] as const) {
    const value = action[field];
    if (typeof value === 'number') out[field] = to999(value, size);
  }
  if (action.type === 'type' && out.x !== undefined && out.y !== undefined) {
    out.type = 'point_and_type';
  }
  return out;
}

function isRecord(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
