import { ActionFailure } from '../../errors.js';

export type Run = (command: string, args: string[]) => Promise<string>;

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

  constructor(private readonly run: Run) {}

  /** Presses the characters in order. */
  async type(text: string): Promise<void> {
    const spare = await this.spareKeycodes();
    for (const chunk of chunks([...text], spare.length)) {
      const keysyms = await this.bind(chunk, spare);
      await this.run('xdotool', ['key', '--delay', '5', ...keysyms]);
    }
  }

  private async bind(chars: string[], spare: number[]): Promise<string[]> {
    const fresh = new Map<string, number>();
    for (const char of new Set(chars)) {
      if (!this.bound.has(char)) fresh.set(char, spare[this.next++ % spare.length]!);
    }
    if (fresh.size > 0) {
      const expressions = [...fresh].flatMap(([char, keycode]) => [
        '-e',
        `keycode ${keycode} = ${keysym(char)} ${keysym(char)}`,
      ]);
      // Remembered only once bound: after a failed xmodmap, the next try binds them again.
      await this.run('xmodmap', expressions);
      for (const [char, keycode] of fresh) {
        for (const [other, code] of this.bound) if (code === keycode) this.bound.delete(other);
        this.bound.set(char, keycode);
      }
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
