import { expect } from 'vitest';
import type { ExecLine } from '../../src/shared/exec.js';
import type { TestServer } from './test-server.js';

/**
 * POST /computers/{id}/exec read line by line as it arrives. Every line is checked on the way:
 * never blank, always one JSON object.
 */
export class ExecStream {
  readonly lines: ExecLine[] = [];
  private buffer = '';
  private ended = false;
  private readonly decoder = new TextDecoder();

  private constructor(
    readonly response: Response,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly controller: AbortController,
  ) {}

  static async open(
    server: TestServer,
    computerId: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<ExecStream> {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/computers/${computerId}/exec`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.key}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    return new ExecStream(response, response.body!.getReader(), controller);
  }

  /** The next line, or undefined once the answer has ended. */
  async next(): Promise<ExecLine | undefined> {
    while (!this.buffer.includes('\n')) {
      if (this.ended) {
        expect(this.buffer, 'the answer ends with a newline').toBe('');
        return undefined;
      }
      const { done, value } = await this.reader.read();
      if (done) this.ended = true;
      else this.buffer += this.decoder.decode(value, { stream: true });
    }
    const at = this.buffer.indexOf('\n');
    const text = this.buffer.slice(0, at);
    this.buffer = this.buffer.slice(at + 1);
    expect(text.trim(), 'a blank NDJSON line').not.toBe('');
    const line = JSON.parse(text) as ExecLine;
    expect(line).toBeTypeOf('object');
    this.lines.push(line);
    return line;
  }

  /** Reads until a line matches. */
  async until(match: (line: ExecLine) => boolean): Promise<ExecLine> {
    for (;;) {
      const line = await this.next();
      if (!line) throw new Error(`the answer ended first: ${JSON.stringify(this.lines)}`);
      if (match(line)) return line;
    }
  }

  /** Every line to the end of the answer. */
  async all(): Promise<ExecLine[]> {
    while (await this.next());
    return this.lines;
  }

  /** Closes the connection, as a client that gives up does. */
  abort(): void {
    this.controller.abort();
  }
}

export const stdoutOf = (lines: ExecLine[]) =>
  lines.flatMap((line) => (line.type === 'stdout' ? [line.data] : [])).join('');
export const stderrOf = (lines: ExecLine[]) =>
  lines.flatMap((line) => (line.type === 'stderr' ? [line.data] : [])).join('');

const FLOOD_CHUNKS = 48;
const FLOOD_CHUNK_BYTES = 500_000;
/**
 * A shell command printing 24 MB (32 MB of `exec_output` events in base64), paced so that a
 * client reading in the test's own process is never left behind by a burst: a stall of that
 * process longer than ~6 chunks' pacing (the 4 MB a client may leave unread) cuts it off too. 20
 * ms a chunk did once in a full run on two cores (the reader was cut off before any event).
 */
export const PACED_FLOOD = {
  command: `for i in $(seq ${FLOOD_CHUNKS}); do head -c ${FLOOD_CHUNK_BYTES} /dev/zero | tr '\\0' x; sleep 0.06; done`,
  bytes: FLOOD_CHUNKS * FLOOD_CHUNK_BYTES,
};
