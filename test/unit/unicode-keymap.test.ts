import { describe, expect, it } from 'vitest';
import { UnicodeKeymap } from '../../src/main/core/computers/desktop/unicode-keymap.js';

/** `xmodmap -pke` of a keyboard with keycodes 200 and 201 unbound. */
const TABLE = 'keycode  38 = a A a A\nkeycode 200 =\nkeycode 201 =\n';

/**
 * A fake X11 tool runner: records each command with its standard input, and each wait after a
 * binding (which ends when the test says, or at once); xmodmap fails while `failing` is set.
 */
function tools(options: { holdWaits?: boolean } = {}) {
  const ran: string[] = [];
  const state = { failing: false };
  const waits: Array<() => void> = [];
  const run = (command: string, args: string[], input?: string) => {
    ran.push(
      `${command} ${args.join(' ')}${input ? `  < ${input.trim().replace(/\n/g, '; ')}` : ''}`,
    );
    if (args[0] === '-pke') return Promise.resolve(TABLE);
    if (command === 'xmodmap' && state.failing) {
      return Promise.reject(new Error('xmodmap failed: unable to open display'));
    }
    return Promise.resolve('');
  };
  const wait = (ms: number) => {
    ran.push(`wait ${ms} ms`);
    if (!options.holdWaits) return Promise.resolve();
    return new Promise<void>((resolve) => waits.push(resolve));
  };
  return { ran, state, waits, keymap: new UnicodeKeymap(run, wait) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('UnicodeKeymap', () => {
  it('binds each character to a spare keycode once, then presses it, all through standard input', async () => {
    const { ran, keymap } = tools();
    await keymap.type('✓é✓');
    await keymap.type('é');
    expect(ran).toEqual([
      'xmodmap -pke',
      'xmodmap -  < keycode 200 = U2713 U2713; keycode 201 = U00E9 U00E9',
      'wait 150 ms',
      'xdotool -  < key --delay 5 U2713 U00E9 U2713',
      'xdotool -  < key --delay 5 U00E9',
    ]);
  });

  it('presses a freshly bound key only once the binding has had time to reach the page', async () => {
    const { ran, waits, keymap } = tools({ holdWaits: true });
    const typing = keymap.type('✓');
    await tick();
    expect(ran.at(-1)).toBe('wait 150 ms');
    waits.shift()!();
    await typing;
    expect(ran.at(-1)).toBe('xdotool -  < key --delay 5 U2713');
    // Bound already: pressed with no wait.
    await keymap.type('✓');
    expect(ran.at(-1)).toBe('xdotool -  < key --delay 5 U2713');
    expect(waits).toHaveLength(0);
  });

  it('binds ahead: the wait runs while other text is typed, and typing the characters binds nothing more', async () => {
    const { ran, waits, keymap } = tools({ holdWaits: true });
    await keymap.bindAhead('✓é');
    expect(ran.slice(1)).toEqual([
      'xmodmap -  < keycode 200 = U2713 U2713; keycode 201 = U00E9 U00E9',
      'wait 150 ms',
    ]);
    waits.shift()!();
    await keymap.type('é✓');
    expect(ran.slice(3)).toEqual(['xdotool -  < key --delay 5 U00E9 U2713']);
  });

  it('binds a character again after its binding failed, rather than pressing an unbound key', async () => {
    const { ran, state, keymap } = tools();
    state.failing = true;
    await expect(keymap.type('✓')).rejects.toThrow('unable to open display');
    state.failing = false;
    await keymap.type('✓');
    expect(ran.slice(1)).toEqual([
      'xmodmap -  < keycode 200 = U2713 U2713',
      'xmodmap -  < keycode 201 = U2713 U2713',
      'wait 150 ms',
      'xdotool -  < key --delay 5 U2713',
    ]);
  });

  it('reuses keycodes in turn when characters outnumber them, unbinding the one it replaced', async () => {
    const { ran, keymap } = tools();
    await keymap.type('αβγ');
    await keymap.type('α');
    expect(ran.slice(1).filter((line) => !line.startsWith('wait'))).toEqual([
      'xmodmap -  < keycode 200 = U03B1 U03B1; keycode 201 = U03B2 U03B2',
      'xdotool -  < key --delay 5 U03B1 U03B2',
      'xmodmap -  < keycode 200 = U03B3 U03B3',
      'xdotool -  < key --delay 5 U03B3',
      // α lost keycode 200 to γ: bound again, to 201.
      'xmodmap -  < keycode 201 = U03B1 U03B1',
      'xdotool -  < key --delay 5 U03B1',
    ]);
  });

  it('never takes the keycode of a character pressed in the same keystrokes', async () => {
    const { ran, keymap } = tools();
    await keymap.type('αβ'); // α 200, β 201; the next turn is 200's
    await keymap.type('β');
    // β is bound (201); γ's turn would take 200, which α holds, and α is not pressed now: fine.
    // Then "γα": γ took 200 from α, so α must go to 201, not back to 200 where γ is.
    await keymap.type('γ');
    await keymap.type('γα');
    const presses = ran.filter((line) => !line.startsWith('wait'));
    expect(presses.slice(-2)).toEqual([
      'xmodmap -  < keycode 201 = U03B1 U03B1',
      'xdotool -  < key --delay 5 U03B3 U03B1',
    ]);
    // And "βγ" with β unbound: β may not take γ's keycode.
    await keymap.type('βγ');
    expect(ran.filter((line) => !line.startsWith('wait')).slice(-2)).toEqual([
      'xmodmap -  < keycode 201 = U03B2 U03B2',
      'xdotool -  < key --delay 5 U03B2 U03B3',
    ]);
  });
});
