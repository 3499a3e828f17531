import { invalidRequest } from '../errors.js';

/**
 * A key in canonical form: a named key ('shift', 'enter', 'f5', 'arrowup') or one printable
 * character with its case kept ('a', 'A', '!'). Drivers map these to their own key codes.
 */
export type Key = string;

const NAMED: Record<string, Key> = {
  shift: 'shift',
  ctrl: 'control',
  control: 'control',
  alt: 'alt',
  option: 'alt',
  meta: 'meta',
  cmd: 'meta',
  command: 'meta',
  super: 'meta',
  win: 'meta',
  windows: 'meta',
  enter: 'enter',
  return: 'enter',
  escape: 'escape',
  esc: 'escape',
  tab: 'tab',
  backspace: 'backspace',
  delete: 'delete',
  del: 'delete',
  space: 'space',
  arrowup: 'arrowup',
  arrowdown: 'arrowdown',
  arrowleft: 'arrowleft',
  arrowright: 'arrowright',
  up: 'arrowup',
  down: 'arrowdown',
  left: 'arrowleft',
  right: 'arrowright',
  home: 'home',
  end: 'end',
  pageup: 'pageup',
  pagedown: 'pagedown',
  pgup: 'pageup',
  pgdn: 'pagedown',
  insert: 'insert',
  capslock: 'capslock',
};
for (let n = 1; n <= 24; n++) NAMED[`f${n}`] = `f${n}`;

export const MODIFIERS = new Set<Key>(['shift', 'control', 'alt', 'meta']);

/** Parses one key name, or a '+'-joined combination ("ctrl+a", "ctrl++"), into keys. */
export function parseKeyCombo(text: string, param: string): Key[] {
  return splitKeyCombo(text).map((part) => parseKeyName(part, param, text));
}

/**
 * The names in a '+'-joined combination, unchecked: "ctrl+shift+t" → ctrl, shift, t. A '+' right
 * after a separator (or at the start) is the plus key itself, so "ctrl++" is ctrl and '+'.
 */
export function splitKeyCombo(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const char of text) {
    if (char === '+' && current !== '') {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (current !== '') parts.push(current);
  return parts;
}

function parseKeyName(name: string, param: string, whole: string): Key {
  if ([...name].length === 1) {
    if (!/\P{C}/u.test(name)) throw unknownKey(name, param);
    return name;
  }
  const named = NAMED[name.toLowerCase().replace(/[\s_-]/g, '')];
  if (named) return named;
  throw unknownKey(name === whole ? name : `${name}" in "${whole}`, param);
}

function unknownKey(name: string, param: string): Error {
  return invalidRequest(
    `unknown key name "${name}"; use a single character or one of: ctrl, shift, alt, meta, enter, escape, tab, backspace, delete, space, arrowup, home, end, pageup, pagedown, insert, capslock, f1…f24`,
    param,
  );
}

/** Flattens a list of key names and combinations into one chord, in order. */
export function parseChord(keys: readonly string[], param: string): Key[] {
  return keys.flatMap((key, index) => parseKeyCombo(key, `${param}.${index}`));
}
