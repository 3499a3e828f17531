import { parseKeyCombo, type Key } from '../../keyboard/key-names.js';
import { modelKeys } from './model-key-aliases.js';

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
  try {
    return modelKeys(combo);
  } catch {
    return null;
  }
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
