import { createParser } from 'eventsource-parser';

/** `raw` is the event's data as it was sent, before JSON parsing. */
export type SseEvent = { event: string | undefined; data: unknown; raw: string };

/**
 * Reads a Server-Sent Events stream the way a client would: events with their JSON data (parsed;
 * non-JSON data or a line that is no SSE field fails the stream), comments counted apart.
 */
export class SseReader {
  comments = 0;
  private readonly events: SseEvent[] = [];
  private waiters: Array<() => void> = [];
  ended = false;
  /** A malformed event (no data, not JSON): raised by next() instead of looking like an end. */
  private failure: Error | undefined;

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    void this.pump();
  }

  static async open(url: string, key: string | null): Promise<SseReader> {
    const controller = new AbortController();
    const response = await fetch(url, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: controller.signal,
    });
    return new SseReader(response, controller);
  }

  /** A stream answered to a POST (streamed responses, tasks, chat completions). */
  static async post(
    url: string,
    key: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<SseReader> {
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    return new SseReader(response, controller);
  }

  /** Every event until the stream ends. */
  async all(timeoutMs = 10_000): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (;;) {
      const event = await this.next(timeoutMs);
      if (!event) return out;
      out.push(event);
    }
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: ({ event, data }) => {
        this.events.push({ event, data: JSON.parse(data) as unknown, raw: data });
        this.wake();
      },
      onComment: () => void (this.comments += 1),
      onError: (error) => {
        throw error;
      },
    });
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (error) {
      // close() aborts the body; anything else is a malformed stream.
      if ((error as Error).name !== 'AbortError') this.failure = error as Error;
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** A method, not an inline check: the stream can fail while next() awaits. */
  private raiseFailure(): void {
    if (this.failure)
      throw new Error(`malformed event stream: ${this.failure.message}`, { cause: this.failure });
  }

  /** The next event, or undefined when the stream ended first. */
  async next(timeoutMs = 10_000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    this.raiseFailure();
    while (this.events.length === 0 && !this.ended) {
      if (Date.now() > deadline) throw new Error('no event in time');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    if (this.events.length === 0) this.raiseFailure();
    return this.events.shift();
  }

  /** Every event that arrives within ms (or until the stream ends). */
  async collect(ms: number): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    const until = Date.now() + ms;
    while (Date.now() < until && !this.ended) {
      const event = await this.next(until - Date.now()).catch(() => undefined);
      if (event) out.push(event);
    }
    out.push(...this.events.splice(0));
    return out;
  }

  close(): void {
    this.controller.abort();
  }
}
