import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the Lightcone cloud (POST /v1/responses, /v1/chat/completions) on 127.0.0.1:
 * records every request and answers each from a queue of canned replies, in order. With the queue
 * empty it answers 500 so a test that forgot a reply fails loudly.
 */

export type RecordedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: any;
};

/** One canned answer: JSON (any status), raw text (garbage), or SSE events; optionally late. */
export type FakeReply = {
  status?: number;
  json?: unknown;
  text?: string;
  /** Sent as `data: <json>` events, then `data: [DONE]`. */
  sse?: unknown[];
  delayMs?: number;
};

export type FakeLightcone = {
  url: string;
  requests: RecordedRequest[];
  reply(...replies: FakeReply[]): void;
  close(): Promise<void>;
};

export async function startFakeLightcone(): Promise<FakeLightcone> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: parse(text),
      });
      const reply = queue.shift() ?? {
        status: 500,
        json: { error: { message: 'fake-lightcone: no reply queued' } },
      };
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, reply);
      }, reply.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
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

function send(res: ServerResponse, reply: FakeReply): void {
  const status = reply.status ?? 200;
  if (reply.sse) {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of reply.sse) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': 'text/html' }).end(reply.text);
    return;
  }
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify(reply.json ?? {}));
}
