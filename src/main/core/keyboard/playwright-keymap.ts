import type { Key } from './key-names.js';

const NAMED: Record<string, string> = {
  shift: 'Shift',
  control: 'Control',
  alt: 'Alt',
  meta: 'Meta',
  enter: 'Enter',
  escape: 'Escape',
  tab: 'Tab',
  backspace: 'Backspace',
  delete: 'Delete',
  space: 'Space',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
  capslock: 'CapsLock',
};
for (let n = 1; n <= 24; n++) NAMED[`f${n}`] = `F${n}`;

/** Unshifted symbols by their physical key, so a held Shift changes them as a keyboard would. */
const CODES: Record<string, string> = {
  '-': 'Minus',
  '=': 'Equal',
  '[': 'BracketLeft',
  ']': 'BracketRight',
  '\\': 'Backslash',
  ';': 'Semicolon',
  "'": 'Quote',
  ',': 'Comma',
  '.': 'Period',
  '/': 'Slash',
  '`': 'Backquote',
  ' ': 'Space',
};

const SHIFTED = '~!@#$%^&*()_+{}|:"<>?';

/**
 * Playwright key for a canonical key. Lower-case letters and digits go by key code (KeyA,
 * Digit1): Playwright's press('a') ignores a held Shift, pressing KeyA respects it.
 */
export function playwrightKey(key: Key): string {
  if (NAMED[key]) return NAMED[key];
  if (/^[a-z]$/.test(key)) return `Key${key.toUpperCase()}`;
  if (/^[0-9]$/.test(key)) return `Digit${key}`;
  return CODES[key] ?? key;
}

/** Whether Playwright's US layout has the key; other single characters are inserted as text. */
export function inPlaywrightLayout(key: Key): boolean {
  if (NAMED[key]) return !/^f(1[3-9]|2[0-4])$/.test(key);
  return /^[A-Za-z0-9]$/.test(key) || key in CODES || SHIFTED.includes(key) || key === '\n';
}
