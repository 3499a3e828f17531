import type { Response } from 'express';

/**
 * An NDJSON answer: one JSON object per line, each written (and so flushed) as it comes. JSON
 * escapes newlines inside strings, so a line never breaks and none is ever blank.
 */
export class NdjsonWriter {
  /** Aborted when the client goes away before the answer is complete. */
  readonly closed: AbortSignal;

  /** `check` names what is wrong with a line (tests check answers against the contract). */
  constructor(
    private readonly res: Response,
    private readonly check?: (line: object) => string | undefined,
  ) {
    const controller = new AbortController();
    this.closed = controller.signal;
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
  }

  /** Sends the 200 and the headers at once, so the client knows the command started. */
  open(): void {
    this.res.status(200);
    this.res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
    this.res.setHeader('cache-control', 'no-store');
    this.res.flushHeaders();
  }

  /** Writes a line; the promise, when there is one, settles once the client has caught up. */
  write(line: object): Promise<void> | undefined {
    if (this.closed.aborted || !this.valid(line)) return undefined;
    if (this.res.write(`${JSON.stringify(line)}\n`)) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  end(): void {
    this.res.end();
  }

  /** A whole answer of one line (a request refused before anything started). */
  only(line: object): void {
    if (!this.valid(line)) return;
    this.res.status(200).type('application/x-ndjson; charset=utf-8');
    this.res.end(`${JSON.stringify(line)}\n`);
  }

  /** A line the contract does not allow ends the answer: a half answer fails the client's test. */
  private valid(line: object): boolean {
    if (!this.check?.(line)) return true;
    this.res.destroy();
    return false;
  }
}
