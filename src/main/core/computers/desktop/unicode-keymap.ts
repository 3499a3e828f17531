import { ActionFailure } from '../../errors.js';

/** Runs an X11 tool; `input` goes to its standard input. */
export type Run = (command: string, args: string[], input?: string) => Promise<string>;

/**
 * How long a key bound a moment ago is left alone before it is pressed. Chromium reads the key on
 * its own X connection but the character through GTK, whose copy of the keymap is refreshed on
 * another connection: a key pressed right after its binding can reach a page before GTK knows the
 * new keysym, and is dropped (seen on fresh desktops: the first fresh character lost, the next one,
 * 5 ms later, typed). 50 ms still lost one character in a run of the whole suite on two busy
 * cores; the wait is paid once per text with new characters, while its other characters type.
 */
const SETTLE_MS = 150;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Types characters outside the keyboard map exactly. xdotool binds such a character to a scratch
 * keycode and unbinds it right after the key-up; a client that reads the key later (a loaded
 * machine) finds nothing there and the character is lost. Here each character gets a spare keycode
 * of its own (xmodmap, the same keysym with and without Shift) that stays bound until the
 * round-robin reuses it, so no key event can outlive its mapping.
 */
export class UnicodeKeymap {
  private spare: number[] | undefined;
  private next = 0;
  private readonly bound = new Map<string, number>();
  /** Resolves once the last binding has had time to reach every client. */
  private settled = Promise.resolve();

  constructor(
    private readonly run: Run,
    private readonly wait: (ms: number) => Promise<void> = sleep,
  ) {}

  /**
   * Binds the characters ahead of typing them (when they fit the spare keycodes at once), so that
   * the wait after a binding passes while the text's other characters are typed.
   */
  async bindAhead(chars: string): Promise<void> {
    const spare = await this.spareKeycodes();
    const distinct = [...new Set(chars)];
    if (distinct.length <= spare.length) await this.bind(distinct, spare);
  }

  /** Presses the characters in order. */
  async type(text: string): Promise<void> {
    const spare = await this.spareKeycodes();
    for (const chunk of chunks([...text], spare.length)) {
      const keysyms = await this.bind(chunk, spare);
      await this.settled;
      // Both tools read the characters from standard input, like typed ASCII: every local user
      // can read a process's arguments, and the text may be a password.
      await this.run('xdotool', ['-'], `key --delay 5 ${keysyms.join(' ')}\n`);
    }
  }

  private async bind(chars: string[], spare: number[]): Promise<string[]> {
    // A fresh character never takes the keycode of another character about to be pressed.
    const keep = new Set(chars.map((char) => this.bound.get(char)));
    const fresh = new Map<string, number>();
    for (const char of new Set(chars)) {
      if (this.bound.has(char)) continue;
      let keycode = spare[this.next++ % spare.length]!;
      while (keep.has(keycode)) keycode = spare[this.next++ % spare.length]!;
      keep.add(keycode);
      fresh.set(char, keycode);
    }
    if (fresh.size > 0) {
      const expressions = [...fresh].map(
        ([char, keycode]) => `keycode ${keycode} = ${keysym(char)} ${keysym(char)}\n`,
      );
      // Remembered only once bound: after a failed xmodmap, the next try binds them again.
      await this.run('xmodmap', ['-'], expressions.join(''));
      for (const [char, keycode] of fresh) {
        for (const [other, code] of this.bound) if (code === keycode) this.bound.delete(other);
        this.bound.set(char, keycode);
      }
      this.settled = this.wait(SETTLE_MS);
    }
    return chars.map(keysym);
  }

  private async spareKeycodes(): Promise<number[]> {
    if (this.spare) return this.spare;
    const table = await this.run('xmodmap', ['-pke']);
    const spare = [...table.matchAll(/^keycode\s+(\d+)\s*=\s*$/gm)].map((match) =>
      Number(match[1]),
    );
    if (spare.length === 0)
      throw new ActionFailure('no spare keycode to type characters outside the keyboard map');
    this.spare = spare;
    return spare;
  }
}

/** X keysym of a Unicode character: U+XXXX. */
function keysym(char: string): string {
  return `U${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Consecutive pieces with at most `size` distinct characters each. */
function chunks(chars: string[], size: number): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let distinct = new Set<string>();
  for (const char of chars) {
    if (!distinct.has(char) && distinct.size === size) {
      out.push(current);
      current = [];
      distinct = new Set();
    }
    distinct.add(char);
    current.push(char);
  }
  if (current.length) out.push(current);
  return out;
}
