import { parseKeyCombo, type Key } from '../../computers/keys.js';

/**
 * X keysym names Claude writes (its `key` action uses xdotool syntax) that Benchtop's own key
 * names do not cover: punctuation by name, the keypad, left/right modifiers, Prior/Next.
 */
const KEYSYMS: Record<string, string> = {
  prior: 'pageup',
  next: 'pagedown',
  kpenter: 'enter',
  isolefttab: 'tab',
  controll: 'control',
  controlr: 'control',
  shiftl: 'shift',
  shiftr: 'shift',
  altl: 'alt',
  altr: 'alt',
  metal: 'meta',
  metar: 'meta',
  superl: 'meta',
  superr: 'meta',
  minus: '-',
  plus: '+',
  equal: '=',
  period: '.',
  comma: ',',
  slash: '/',
  backslash: '\\',
  semicolon: ';',
  colon: ':',
  apostrophe: "'",
  quotedbl: '"',
  grave: '`',
  asciitilde: '~',
  exclam: '!',
  at: '@',
  numbersign: '#',
  dollar: '$',
  percent: '%',
  asciicircum: '^',
  ampersand: '&',
  asterisk: '*',
  parenleft: '(',
  parenright: ')',
  underscore: '_',
  bracketleft: '[',
  bracketright: ']',
  braceleft: '{',
  braceright: '}',
  bar: '|',
  less: '<',
  greater: '>',
  question: '?',
  kpadd: '+',
  kpsubtract: '-',
  kpmultiply: '*',
  kpdivide: '/',
  kpdecimal: '.',
};
for (let digit = 0; digit <= 9; digit++) KEYSYMS[`kp${digit}`] = String(digit);

/** Benchtop key names written back the way Claude writes them, for the history it is sent. */
const XDOTOOL: Record<string, string> = {
  control: 'ctrl',
  meta: 'super',
  enter: 'Return',
  escape: 'Escape',
  tab: 'Tab',
  backspace: 'BackSpace',
  delete: 'Delete',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  pageup: 'Page_Up',
  pagedown: 'Page_Down',
  home: 'Home',
  end: 'End',
  insert: 'Insert',
  capslock: 'Caps_Lock',
  ' ': 'space',
  '+': 'plus',
};

/**
 * One xdotool combination ("ctrl+shift+t", "Return", "KP_0") as Benchtop keys, or null when a
 * name is unknown.
 */
export function keysFromXdotool(combo: string): Key[] | null {
  const parts = [...combo].length === 1 ? [combo] : splitCombo(combo);
  if (parts.length === 0) return null;
  const keys: Key[] = [];
  for (const part of parts) {
    const alias = KEYSYMS[part.toLowerCase().replace(/[\s_-]/g, '')];
    try {
      keys.push(...parseKeyCombo(alias ?? part, 'keys'));
    } catch {
      return null;
    }
  }
  return keys;
}

/** "ctrl++" is ctrl and plus: a '+' right after a separator is the key itself. */
function splitCombo(combo: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const char of combo) {
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

/** Keys (any spelling Benchtop accepts) as one xdotool combination. */
export function xdotoolFromKeys(keys: readonly string[]): string {
  return keys
    .flatMap((key) => {
      try {
        return parseKeyCombo(key, 'keys');
      } catch {
        // Not a Benchtop name (an older item from elsewhere): pass it on as written.
        return [key];
      }
    })
    .map((key) => (/^f\d{1,2}$/.test(key) ? key.toUpperCase() : (XDOTOOL[key] ?? key)))
    .join('+');
}
