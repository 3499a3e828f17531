import type { Response } from 'express';

/**
 * An NDJSON answer: one JSON object per line, each written (and so flushed) as it comes. JSON
 * escapes newlines inside strings, so a line never breaks and none is ever blank.
 */
export class NdjsonWriter {
  /** Aborted when the client goes away before the answer is complete. */
  readonly closed: AbortSignal;

  constructor(private readonly res: Response) {
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
    if (this.closed.aborted) return undefined;
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
    this.res.status(200).type('application/x-ndjson; charset=utf-8');
    this.res.end(`${JSON.stringify(line)}\n`);
  }
}
