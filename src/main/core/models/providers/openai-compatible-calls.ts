/** A Python-style call as GUI models write actions: `click(start_box='(500,300)')`. */
export type TextCall = { name: string; args: Record<string, string>; positional: string[] };

/**
 * Parses one or more calls separated by blank space, or null when the text is anything else.
 * Values come back as text: quoted strings unescaped, tuples and numbers as written.
 */
export function parseCalls(text: string): TextCall[] | null {
  const scanner = new Scanner(text);
  const calls: TextCall[] = [];
  scanner.skip(/[\s;]/);
  while (!scanner.done()) {
    const call = scanner.call();
    if (!call) return null;
    calls.push(call);
    scanner.skip(/[\s;]/);
  }
  return calls.length ? calls : null;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r' };

class Scanner {
  private at = 0;

  constructor(private readonly text: string) {}

  done() {
    return this.at >= this.text.length;
  }

  skip(pattern: RegExp) {
    while (!this.done() && pattern.test(this.text[this.at]!)) this.at++;
  }

  call(): TextCall | null {
    const name = /^[A-Za-z_][\w.]*/.exec(this.text.slice(this.at))?.[0];
    if (!name) return null;
    this.at += name.length;
    this.skip(/[ \t]/);
    if (this.text[this.at] !== '(') return null;
    this.at++;
    // `pyautogui.click(…)` is a click.
    const call: TextCall = { name: name.split('.').pop()!, args: {}, positional: [] };
    for (;;) {
      this.skip(/\s/);
      // A model cut off before its closing parenthesis still meant the call.
      if (this.done() || this.text[this.at] === ')') break;
      const key = /^([A-Za-z_]\w*)\s*=\s*/.exec(this.text.slice(this.at));
      if (key) this.at += key[0].length;
      const value = this.value();
      if (value === null) return null;
      if (key) call.args[key[1]!] = value;
      else call.positional.push(value);
      this.skip(/\s/);
      if (this.text[this.at] === ',') this.at++;
      else if (!this.done() && this.text[this.at] !== ')') return null;
    }
    this.at++;
    return call;
  }

  private value(): string | null {
    const first = this.text[this.at];
    if (first === "'" || first === '"') return this.quoted(first);
    if (first === '(' || first === '[') return this.bracketed();
    const token = /^[^,)]*/.exec(this.text.slice(this.at))![0];
    this.at += token.length;
    return token.trim() || null;
  }

  /**
   * A quote closes the string only when a `,` or `)` follows: models often leave apostrophes
   * unescaped inside `type(content='it's here')`.
   */
  private quoted(quote: string): string | null {
    let out = '';
    for (let i = this.at + 1; i < this.text.length; i++) {
      const char = this.text[i]!;
      if (char === '\\' && i + 1 < this.text.length) {
        const next = this.text[++i]!;
        out += ESCAPES[next] ?? next;
      } else if (char === quote && /^\s*([,)]|$)/.test(this.text.slice(i + 1))) {
        this.at = i + 1;
        return out;
      } else {
        out += char;
      }
    }
    return null;
  }

  private bracketed(): string | null {
    let depth = 0;
    for (let i = this.at; i < this.text.length; i++) {
      const char = this.text[i]!;
      if (char === '(' || char === '[') depth++;
      if (char === ')' || char === ']') depth--;
      if (depth === 0) {
        const raw = this.text.slice(this.at, i + 1);
        this.at = i + 1;
        return raw;
      }
    }
    return null;
  }
}
