import type { Application, Request, Response } from 'express';

/** Comments at least this often on every stream: the SDKs give up after 60 s of silence. */
export const HEARTBEAT_MS = 15_000;
/**
 * Bytes a client may have waiting before it counts as slow for frames. write() returning false is
 * no test: one JPEG frame is larger than the socket's 16 KiB high-water mark.
 */
const MAX_BUFFERED_FRAME_BYTES = 1024 * 1024;
/**
 * Bytes a client may leave unread before its stream is cut off (the connection closed): without a
 * bound, one client that stops reading while a command prints hundreds of megabytes would make
 * the server hold all of them. A client that reads keeps far below it.
 */
const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

export type SseStream = {
  /** Sends one event with JSON data; `event` names it (screencast's cursor_position). */
  send(data: unknown, event?: string): void;
  /**
   * Sends a frame if the client keeps up; otherwise keeps only the newest one for when it does,
   * so a slow client gets fewer frames, never a growing backlog. A stream of several sources'
   * frames keeps the newest of each (`source`: a computer's id).
   */
  sendLatest(data: unknown, source?: string): void;
  /** Registers cleanup for when the stream ends (client gone or end() called). */
  onClose(dispose: () => void): void;
  end(): void;
  readonly closed: boolean;
};

export type SseOptions = {
  /**
   * Milliseconds between heartbeats: a stream's comments, the spaces of an answer that waits on
   * a person (default HEARTBEAT_MS; tests shorten it).
   */
  heartbeatMs?: number;
};

const APP_SETTING = 'sse options';

/** The options every stream the app opens uses, unless a route passes its own. */
export function setSseOptions(app: Application, options: SseOptions): void {
  app.set(APP_SETTING, options);
}

function appOptions(req: Request): SseOptions {
  return (req.app?.get(APP_SETTING) as SseOptions | undefined) ?? {};
}

/** How often the app's idle connections say they are alive (streams, answers that wait). */
export function heartbeatMsOf(req: Request): number {
  return appOptions(req).heartbeatMs ?? HEARTBEAT_MS;
}

/**
 * Server-Sent Events on an Express response: JSON data on every event, never `[DONE]`, heartbeat
 * comments, backpressure, and every subscription disposed when the client goes away.
 */
export function openSse(
  req: Request,
  res: Response,
  options: SseOptions = appOptions(req),
): SseStream {
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
  const latest = new Map<string, string>();
  // What a stream sends the moment it opens (a task's stored events) is bounded by what is
  // stored, so it does not count against the client; only falling behind afterwards does.
  let allowance = Infinity;
  setImmediate(() => {
    if (!closed) allowance = res.writableLength + MAX_UNSENT_BYTES;
  });

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
    allowance = Math.min(allowance, MAX_UNSENT_BYTES);
    const frames = [...latest.values()];
    latest.clear();
    for (const frame of frames) write(frame);
  });
  res.on('close', close);
  const heartbeat = setInterval(
    () => write(': heartbeat\n\n'),
    options.heartbeatMs ?? HEARTBEAT_MS,
  );
  heartbeat.unref();

  const format = (data: unknown, event?: string) =>
    `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

  return {
    send(data, event) {
      if (closed) return;
      if (waitingForDrain && res.writableLength > allowance) {
        // Nothing more can reach this client before what it left unread, so no event saying why
        // would either: the connection is closed, and with it everything buffered for it.
        res.destroy();
        close();
        return;
      }
      write(format(data, event));
    },
    sendLatest(data, source = '') {
      const frame = format(data);
      if (waitingForDrain && res.writableLength > MAX_BUFFERED_FRAME_BYTES)
        latest.set(source, frame);
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
