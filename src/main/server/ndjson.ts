import type { Response } from 'express';
import { heartbeatMsOf } from './sse.js';

/**
 * An NDJSON answer: one JSON object per line, each written (and so flushed) as it comes. JSON
 * escapes newlines inside strings, so a line never breaks and none is ever blank.
 */
export class NdjsonWriter {
  /** Aborted when the client goes away before the answer is complete. */
  readonly closed: AbortSignal;
  private heartbeat?: NodeJS.Timeout;
  /** Whether anything went out since the heartbeat last looked. */
  private sent = false;
  private isLast: (line: object) => boolean = () => false;

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

  /**
   * Keeps a quiet answer alive: a command held for a person before it starts, or silent while it
   * runs. The SDKs give up on an answer that sends nothing for their timeout (60 s; Python between
   * any two bytes, TypeScript until the headers) and send the command again. After a heartbeat
   * with nothing sent, the 200 and headers go out (once), then a space while nothing else does:
   * whitespace before a JSON line leaves it the same line for every JSON parser. Nothing follows
   * the line `isLast` names (a stream that ends in spaces is no JSON to the Python SDK).
   */
  keepAlive(isLast: (line: object) => boolean): void {
    this.isLast = isLast;
    this.heartbeat = setInterval(() => {
      if (this.sent) {
        this.sent = false;
        return;
      }
      this.open();
      this.res.write(' ');
    }, heartbeatMsOf(this.res.req));
    this.heartbeat.unref();
    this.res.once('close', () => this.stopHeartbeat());
  }

  /** Whether the 200 went out: from then on, a refusal can only be an error line. */
  get started(): boolean {
    return this.res.headersSent;
  }

  /** Sends the 200 and the headers at once, so the client knows the command started. */
  open(): void {
    if (this.res.headersSent) return;
    this.res.status(200);
    this.res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
    this.res.setHeader('cache-control', 'no-store');
    this.res.flushHeaders();
  }

  /** Writes a line; the promise, when there is one, settles once the client has caught up. */
  write(line: object): Promise<void> | undefined {
    if (this.closed.aborted || !this.valid(line)) return undefined;
    this.sent = true;
    if (this.isLast(line)) this.stopHeartbeat();
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
    this.stopHeartbeat();
    this.res.end();
  }

  /** The last line of an answer: all of it for a request refused before anything started. */
  only(line: object): void {
    this.stopHeartbeat();
    if (!this.valid(line)) return;
    if (!this.res.headersSent) this.res.status(200).type('application/x-ndjson; charset=utf-8');
    this.res.end(`${JSON.stringify(line)}\n`);
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
  }

  /** A line the contract does not allow ends the answer: a half answer fails the client's test. */
  private valid(line: object): boolean {
    if (!this.check?.(line)) return true;
    this.res.destroy();
    return false;
  }
}
