import type { Request, Response } from 'express';

/** Comments at least this often on every stream: the SDKs give up after 60 s of silence. */
export const HEARTBEAT_MS = 15_000;
/**
 * Bytes a client may have waiting before it counts as slow for frames. write() returning false is
 * no test: one JPEG frame is larger than the socket's 16 KiB high-water mark.
 */
const MAX_BUFFERED_FRAME_BYTES = 1024 * 1024;
/** Events queued for a client that reads slower than they come; beyond this it is cut off. */
const MAX_QUEUED_EVENTS = 10_000;

export type SseStream = {
  /** Sends one event with JSON data; `event` names it (screencast's cursor_position). */
  send(data: unknown, event?: string): void;
  /**
   * Sends a frame if the client keeps up; otherwise keeps only the newest one for when it does,
   * so a slow client gets fewer frames, never a growing backlog.
   */
  sendLatest(data: unknown): void;
  /** Registers cleanup for when the stream ends (client gone or end() called). */
  onClose(dispose: () => void): void;
  end(): void;
  readonly closed: boolean;
};

/**
 * Server-Sent Events on an Express response: JSON data on every event, never `[DONE]`, heartbeat
 * comments, backpressure, and every subscription disposed when the client goes away.
 */
export function openSse(req: Request, res: Response): SseStream {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  req.socket.setNoDelay(true);
  const disposers: Array<() => void> = [];
  let closed = false;
  let waitingForDrain = false;
  let latest: string | undefined;
  let queued = 0;

  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const dispose of disposers.splice(0)) {
      try {
        dispose();
      } catch {
        // One failing cleanup must not skip the others.
      }
    }
  };
  const write = (chunk: string): boolean => {
    if (closed) return false;
    const flushed = res.write(chunk);
    if (!flushed) waitingForDrain = true;
    return flushed;
  };
  res.on('drain', () => {
    waitingForDrain = false;
    queued = 0;
    if (latest !== undefined) {
      const frame = latest;
      latest = undefined;
      write(frame);
    }
  });
  res.on('close', close);
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), HEARTBEAT_MS);
  heartbeat.unref();

  const format = (data: unknown, event?: string) =>
    `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

  return {
    send(data, event) {
      if (waitingForDrain && ++queued > MAX_QUEUED_EVENTS) {
        res.destroy();
        return;
      }
      write(format(data, event));
    },
    sendLatest(data) {
      const frame = format(data);
      if (waitingForDrain && res.writableLength > MAX_BUFFERED_FRAME_BYTES) latest = frame;
      else write(frame);
    },
    onClose(dispose) {
      if (closed) dispose();
      else disposers.push(dispose);
    },
    end() {
      if (!closed) res.end();
      close();
    },
    get closed() {
      return closed;
    },
  };
}
