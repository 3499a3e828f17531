import type { Key } from './key-names.js';

/** nut-js Key enum names for the named keys. */
const NAMED: Record<string, string> = {
  shift: 'LeftShift',
  control: 'LeftControl',
  alt: 'LeftAlt',
  meta: 'LeftSuper',
  enter: 'Return',
  escape: 'Escape',
  tab: 'Tab',
  backspace: 'Backspace',
  delete: 'Delete',
  space: 'Space',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
  capslock: 'CapsLock',
};
for (let n = 1; n <= 24; n++) NAMED[`f${n}`] = `F${n}`;

const UNSHIFTED: Record<string, string> = {
  '-': 'Minus',
  '=': 'Equal',
  '[': 'LeftBracket',
  ']': 'RightBracket',
  '\\': 'Backslash',
  ';': 'Semicolon',
  "'": 'Quote',
  ',': 'Comma',
  '.': 'Period',
  '/': 'Slash',
  '`': 'Grave',
  ' ': 'Space',
};
for (let d = 0; d <= 9; d++) UNSHIFTED[String(d)] = `Num${d}`;

/** Shifted symbols of a US keyboard and the key they are on. */
const SHIFTED: Record<string, string> = {
  '~': '`',
  '!': '1',
  '@': '2',
  '#': '3',
  $: '4',
  '%': '5',
  '^': '6',
  '&': '7',
  '*': '8',
  '(': '9',
  ')': '0',
  _: '-',
  '+': '=',
  '{': '[',
  '}': ']',
  '|': '\\',
  ':': ';',
  '"': "'",
  '<': ',',
  '>': '.',
  '?': '/',
};

/**
 * The nut-js keys that produce a canonical key on a US layout. Shift is pressed explicitly for
 * shifted symbols and capitals: nut-js on Xvfb does not. Undefined for characters
 * off the layout, which are typed instead.
 */
export function nutKeys(key: Key): string[] | undefined {
  if (NAMED[key]) return [NAMED[key]];
  if (/^[a-z]$/.test(key)) return [key.toUpperCase()];
  if (/^[A-Z]$/.test(key)) return ['LeftShift', key];
  if (UNSHIFTED[key]) return [UNSHIFTED[key]];
  if (SHIFTED[key]) return ['LeftShift', UNSHIFTED[SHIFTED[key]]!];
  return undefined;
}
