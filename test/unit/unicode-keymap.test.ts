import { describe, expect, it } from 'vitest';
import { UnicodeKeymap } from '../../src/main/core/computers/desktop/unicode-keymap.js';

/** `xmodmap -pke` of a keyboard with keycodes 200 and 201 unbound. */
const TABLE = 'keycode  38 = a A a A\nkeycode 200 =\nkeycode 201 =\n';

/** A fake X11 tool runner: records each command; xmodmap -e fails while `failing` is set. */
function tools() {
  const ran: string[] = [];
  const state = { failing: false };
  const run = (command: string, args: string[]) => {
    ran.push(`${command} ${args.join(' ')}`);
    if (args[0] === '-pke') return Promise.resolve(TABLE);
    if (command === 'xmodmap' && state.failing) {
      return Promise.reject(new Error('xmodmap failed: unable to open display'));
    }
    return Promise.resolve('');
  };
  return { ran, state, keymap: new UnicodeKeymap(run) };
}

describe('UnicodeKeymap', () => {
  it('binds each character to a spare keycode once, then presses it', async () => {
    const { ran, keymap } = tools();
    await keymap.type('✓é✓');
    await keymap.type('é');
    expect(ran).toEqual([
      'xmodmap -pke',
      'xmodmap -e keycode 200 = U2713 U2713 -e keycode 201 = U00E9 U00E9',
      'xdotool key --delay 5 U2713 U00E9 U2713',
      'xdotool key --delay 5 U00E9',
    ]);
  });

  it('binds a character again after its binding failed, rather than pressing an unbound key', async () => {
    const { ran, state, keymap } = tools();
    state.failing = true;
    await expect(keymap.type('✓')).rejects.toThrow('unable to open display');
    state.failing = false;
    await keymap.type('✓');
    expect(ran.slice(1)).toEqual([
      'xmodmap -e keycode 200 = U2713 U2713',
      'xmodmap -e keycode 201 = U2713 U2713',
      'xdotool key --delay 5 U2713',
    ]);
  });

  it('reuses keycodes in turn when characters outnumber them, unbinding the one it replaced', async () => {
    const { ran, keymap } = tools();
    await keymap.type('αβγ');
    await keymap.type('α');
    expect(ran.slice(1)).toEqual([
      'xmodmap -e keycode 200 = U03B1 U03B1 -e keycode 201 = U03B2 U03B2',
      'xdotool key --delay 5 U03B1 U03B2',
      'xmodmap -e keycode 200 = U03B3 U03B3',
      'xdotool key --delay 5 U03B3',
      // α lost keycode 200 to γ: bound again, to 201.
      'xmodmap -e keycode 201 = U03B1 U03B1',
      'xdotool key --delay 5 U03B1',
    ]);
  });
});
