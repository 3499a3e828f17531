import { describe, expect, it } from 'vitest';
import { parseChord, parseKeyCombo } from '../../src/main/core/keyboard/key-names.js';
import { playwrightKey } from '../../src/main/core/keyboard/playwright-keymap.js';

describe('key names', () => {
  it.each([
    ['a', ['a']],
    ['A', ['A']],
    ['+', ['+']],
    ['ctrl+a', ['control', 'a']],
    ['Ctrl+Shift+T', ['control', 'shift', 'T']],
    ['ctrl++', ['control', '+']],
    ['CMD+Return', ['meta', 'enter']],
    ['page_down', ['pagedown']],
    ['PgUp', ['pageup']],
    ['F24', ['f24']],
    ['é', ['é']],
  ])('%s', (text, keys) => {
    expect(parseKeyCombo(text, 'keys.0')).toEqual(keys);
  });

  it('rejects unknown names, naming the name and the field', () => {
    expect(() => parseChord(['ctrl', 'hyper'], 'keys')).toThrow(/unknown key name "hyper"/);
    try {
      parseChord(['ctrl', 'hyper'], 'keys');
    } catch (error) {
      expect((error as { param?: string }).param).toBe('keys.1');
    }
  });

  it('maps letters and digits to key codes so a held Shift applies', () => {
    expect(['a', 'Z', '7', '-', 'enter', 'f3', '!'].map(playwrightKey)).toEqual([
      'KeyA',
      'Z',
      'Digit7',
      'Minus',
      'Enter',
      'F3',
      '!',
    ]);
  });
});
