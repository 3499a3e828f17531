import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received. */
export type RecordedRequest<Body = unknown> = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: Body;
};

/**
 * One canned answer: `json` (the default, `{}`), `text` sent as it is (garbage, HTML error
 * pages), or an event stream. `delayMs` holds the answer back first, to test timeouts.
 */
export type UpstreamReply = {
  /** 200 unless given. */
  status?: number;
  /** Sent besides the content type: `retry-after`, `x-should-retry`… */
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
  /**
   * OpenAI-style SSE: one `data:` event each (strings as they are, anything else as JSON), then
   * `data: [DONE]` unless `done` is false.
   */
  sse?: unknown[];
  done?: boolean;
  /** Anthropic-style SSE: named events, an `event:` line before each `data:`, and no [DONE]. */
  events?: Array<{ event: string; data: unknown }>;
  delayMs?: number;
  /** Holds the answer until this settles, so a test can act while the request is in flight. */
  until?: Promise<unknown>;
};

export type FakeUpstream<Reply extends UpstreamReply = UpstreamReply, Body = unknown> = {
  /** The base URL to configure. */
  url: string;
  requests: RecordedRequest<Body>[];
  /** Queues replies, answered in order, one per request, whatever its path. */
  reply(...replies: Reply[]): void;
  /** Forgets the requests and the replies still queued, so one test's leftovers miss the next. */
  reset(): void;
  close(): Promise<void>;
};

export type FakeUpstreamOptions = {
  /** Appended to the URL handed out, for APIs configured with their /v1 (OpenAI's). */
  basePath?: string;
  /**
   * The answer when no reply is queued: an error in the upstream's own format, so a test that
   * forgot to queue one fails loudly rather than hanging.
   */
  unanswered: UpstreamReply;
};

/** A stand-in for a model provider's HTTP API on 127.0.0.1 and a free port. */
export async function startFakeUpstream<
  Reply extends UpstreamReply = UpstreamReply,
  Body = unknown,
>(options: FakeUpstreamOptions): Promise<FakeUpstream<Reply, Body>> {
  const requests: RecordedRequest<Body>[] = [];
  const queue: UpstreamReply[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: parse(text) as Body,
      });
      const reply = queue.shift() ?? options.unanswered;
      void Promise.resolve(reply.until).then(() => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(res, reply);
        }, reply.delayMs ?? 0);
        timers.add(timer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.basePath ?? ''}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const data = (value: unknown) =>
  `data: ${typeof value === 'string' ? value : JSON.stringify(value)}`;

function send(res: ServerResponse, reply: UpstreamReply): void {
  // The client may have given up (a timeout test) and gone.
  if (res.destroyed) return;
  const status = reply.status ?? 200;
  if (reply.sse || reply.events) {
    res.writeHead(status, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    for (const value of reply.sse ?? []) res.write(`${data(value)}\n\n`);
    for (const { event, data: value } of reply.events ?? []) {
      res.write(`event: ${event}\n${data(value)}\n\n`);
    }
    if (reply.sse && reply.done !== false) res.write('data: [DONE]\n\n');
    res.end();
  } else if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': 'text/html', ...reply.headers }).end(reply.text);
  } else {
    res
      .writeHead(status, { 'content-type': 'application/json', ...reply.headers })
      .end(JSON.stringify(reply.json ?? {}));
  }
}
