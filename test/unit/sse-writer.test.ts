import { once } from 'node:events';
import { Writable } from 'node:stream';
import express, { type Request, type Response } from 'express';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_MS, openSse, setSseOptions } from '../../src/main/server/sse.js';

/**
 * A response whose client reads only while `reading` is on: a real Writable (so writableLength,
 * write()'s answer and 'drain' behave as on a socket) with the two header calls openSse makes.
 */
class FakeClient extends Writable {
  status: number | undefined;
  headers: Record<string, string> = {};
  /** Every chunk the client has read, in order. */
  readonly read: string[] = [];
  private reading = true;
  private blocked: (() => void) | undefined;

  constructor() {
    super({ highWaterMark: 16 * 1024, decodeStrings: false });
  }

  override _write(chunk: string, _encoding: string, done: () => void): void {
    const take = () => {
      this.read.push(chunk);
      done();
    };
    if (this.reading) take();
    else this.blocked = take;
  }

  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }

  flushHeaders(): void {}

  pause(): void {
    this.reading = false;
  }

  resume(): void {
    this.reading = true;
    const blocked = this.blocked;
    this.blocked = undefined;
    blocked?.();
  }

  /** The events read so far: data parsed, comments as `: …`. */
  events(): unknown[] {
    return this.read
      .join('')
      .split('\n\n')
      .filter(Boolean)
      .map((block) =>
        block.startsWith(':') ? block : JSON.parse(block.slice(block.indexOf('data: ') + 6)),
      );
  }
}

function open(options?: Parameters<typeof openSse>[2], app?: express.Application) {
  const client = new FakeClient();
  const req = { app, socket: { setNoDelay: () => {} } } as unknown as Request;
  const stream = openSse(req, client as unknown as Response, options);
  return { client, stream };
}

/** Runs what openSse deferred to the next turn (where it fixes how far a client may fall behind). */
const settle = () => vi.advanceTimersByTime(0);
const padding = (bytes: number) => 'x'.repeat(bytes);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SSE writer', () => {
  it('opens with the event-stream headers and writes JSON data, named events with their name', () => {
    const { client, stream } = open();
    stream.send({ a: 1 });
    stream.send({ x: 2, y: 3 }, 'cursor_position');
    expect(client.status).toBe(200);
    expect(client.headers['Content-Type']).toMatch(/^text\/event-stream/);
    expect(client.read.join('')).toBe(
      'data: {"a":1}\n\nevent: cursor_position\ndata: {"x":2,"y":3}\n\n',
    );
    stream.end();
  });

  it('sends a heartbeat comment every interval, and none after the stream ends', () => {
    const { client, stream } = open({ heartbeatMs: 1000 });
    vi.advanceTimersByTime(999);
    expect(client.events()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(client.events()).toEqual([': heartbeat']);
    vi.advanceTimersByTime(2000);
    expect(client.events()).toHaveLength(3);
    stream.end();
    vi.advanceTimersByTime(10_000);
    expect(client.events()).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('heartbeats every 15 s by default, or at the interval the app was given', () => {
    const plain = open();
    vi.advanceTimersByTime(HEARTBEAT_MS - 1);
    expect(plain.client.events()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(plain.client.events()).toEqual([': heartbeat']);
    plain.stream.end();

    const app = express();
    setSseOptions(app, { heartbeatMs: 50 });
    const configured = open(undefined, app);
    vi.advanceTimersByTime(50);
    expect(configured.client.events()).toEqual([': heartbeat']);
    configured.stream.end();
  });

  it('keeps only the newest frame for a client that does not keep up, and sends it on drain', () => {
    const { client, stream } = open();
    settle();
    client.pause();
    // Two frames of 700 kB fill the client's allowance (1 MiB unread); the rest wait.
    for (let n = 1; n <= 10; n += 1) stream.sendLatest({ n, image: padding(700_000) });
    expect(client.writableLength).toBeLessThan(2 * 700_100);
    client.resume();
    expect(client.events().map((event) => (event as { n: number }).n)).toEqual([1, 2, 10]);
    stream.sendLatest({ n: 11 });
    expect(client.events().map((event) => (event as { n: number }).n)).toEqual([1, 2, 10, 11]);
    stream.end();
  });

  it('sends every frame to a client that keeps up', () => {
    const { client, stream } = open();
    settle();
    for (let n = 1; n <= 10; n += 1) stream.sendLatest({ n, image: padding(700_000) });
    expect(client.events()).toHaveLength(10);
    stream.end();
  });

  it('cuts off a client that leaves more than 4 MiB of events unread, and runs its cleanup', async () => {
    const { client, stream } = open();
    const disposed = vi.fn();
    stream.onClose(disposed);
    settle();
    client.pause();
    for (let n = 0; n < 20 && !stream.closed; n += 1) stream.send({ n, text: padding(512 * 1024) });
    expect(stream.closed).toBe(true);
    expect(client.destroyed).toBe(true);
    expect(disposed).toHaveBeenCalledOnce();
    // Nothing is queued after the cut: the unread bytes are bounded by the cap plus one event.
    stream.send({ after: true });
    expect(client.writableLength).toBeLessThanOrEqual(4 * 1024 * 1024 + 2 * 512 * 1024);
    await once(client, 'close');
  });

  it('does not count what it sends the moment it opens (stored events) against the client', () => {
    const { client, stream } = open();
    client.pause();
    for (let n = 0; n < 12; n += 1) stream.send({ n, text: padding(512 * 1024) });
    settle();
    stream.send({ n: 12 });
    expect(stream.closed).toBe(false);
    client.resume();
    expect(client.events()).toHaveLength(13);
    stream.end();
  });

  it('keeps a client that reads however much it is sent', () => {
    const { client, stream } = open();
    settle();
    for (let n = 0; n < 20; n += 1) stream.send({ n, text: padding(512 * 1024) });
    expect(stream.closed).toBe(false);
    expect(client.events()).toHaveLength(20);
    stream.end();
  });

  it('runs the cleanups when the client goes away; one registered later runs at once', async () => {
    const { client, stream } = open();
    const dispose = vi.fn();
    stream.onClose(dispose);
    client.destroy();
    await once(client, 'close');
    expect(stream.closed).toBe(true);
    expect(dispose).toHaveBeenCalledOnce();
    const late = vi.fn();
    stream.onClose(late);
    expect(late).toHaveBeenCalledOnce();
    stream.send({ ignored: true });
    expect(client.read).toEqual([]);
  });

  it('runs every cleanup even when one throws', () => {
    const { stream } = open();
    const first = vi.fn();
    const last = vi.fn();
    stream.onClose(first);
    stream.onClose(() => {
      throw new Error('cleanup failed');
    });
    stream.onClose(last);
    stream.end();
    expect(first).toHaveBeenCalledOnce();
    expect(last).toHaveBeenCalledOnce();
  });

  it('end() ends the response and runs the cleanups once', () => {
    const { client, stream } = open();
    const dispose = vi.fn();
    stream.onClose(dispose);
    stream.end();
    stream.end();
    expect(client.writableEnded).toBe(true);
    expect(dispose).toHaveBeenCalledOnce();
  });
});
