import { parseKeyCombo, splitKeyCombo, type Key } from '../../keyboard/key-names.js';

/**
 * Key names models write that keys.ts does not know: X11 keysyms from xdotool habits (Claude's
 * `key` action is xdotool syntax; Northstar and local models borrow it) and spellings from
 * OpenAI's examples. Looked up in lower case without spaces, '_' or '-', as keys.ts does.
 */
const ALIASES: Record<string, Key> = {
  controll: 'control',
  controlr: 'control',
  ctrll: 'control',
  ctrlr: 'control',
  shiftl: 'shift',
  shiftr: 'shift',
  altl: 'alt',
  altr: 'alt',
  metal: 'meta',
  metar: 'meta',
  superl: 'meta',
  superr: 'meta',
  prior: 'pageup',
  next: 'pagedown',
  isolefttab: 'tab',
  spacebar: 'space',
  kpenter: 'enter',
  kpadd: '+',
  kpsubtract: '-',
  kpmultiply: '*',
  kpdivide: '/',
  kpdecimal: '.',
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
  quote: "'",
  quotedbl: '"',
  grave: '`',
  backquote: '`',
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
};
for (let digit = 0; digit <= 9; digit++) ALIASES[`kp${digit}`] = String(digit);

export type ModelKeyOptions = {
  /**
   * OpenAI writes letters in capitals ("CTRL", "A" for ctrl+a), where a capital would mean Shift
   * to Benchtop; with this a lone capital letter is read as the lower-case key.
   */
  lowercaseCapitals?: boolean;
};

/**
 * One key name as a model writes it ("Return", "Page_Down", "Control_L", "KP_0", "minus") as a
 * Benchtop key. Throws when it is not exactly one key Benchtop knows; callers blame the model.
 */
export function modelKey(name: string, options: ModelKeyOptions = {}): Key {
  if (options.lowercaseCapitals && /^[A-Z]$/.test(name)) return name.toLowerCase();
  const keys = parseKeyCombo(ALIASES[name.toLowerCase().replace(/[\s_-]/g, '')] ?? name, 'keys');
  if (keys.length !== 1) throw new Error(`"${name}" is not one key`);
  return keys[0]!;
}

/** A '+'-joined combination of such names ("ctrl+shift+t", "super+Left") as Benchtop keys. */
export function modelKeys(combo: string, options: ModelKeyOptions = {}): Key[] {
  const names = splitKeyCombo(combo);
  if (names.length === 0) throw new Error('no key names');
  return names.map((name) => modelKey(name, options));
}
