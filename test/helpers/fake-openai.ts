import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received, its JSON body parsed (the raw text when it was not JSON). */
export type RecordedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
};

/**
 * One canned answer. `json` (with `status`, default 200), `text` (sent as is: garbage, HTML
 * error pages), or `sse` (each entry one `data:` event, then `data: [DONE]` unless `done:
 * false`). `delayMs` holds the answer back first, to test timeouts.
 */
export type FakeReply = {
  status?: number;
  json?: unknown;
  text?: string;
  sse?: unknown[];
  done?: boolean;
  delayMs?: number;
};

export type FakeOpenAI = {
  /** Base URL to configure as `base_url`, ending in /v1 like OpenAI's. */
  url: string;
  requests: RecordedRequest[];
  /** Queues answers, used in order, one per request; an empty queue answers 500. */
  reply(...replies: FakeReply[]): void;
  close(): Promise<void>;
};

/**
 * A stand-in for api.openai.com on 127.0.0.1 that speaks its wire format (POST /v1/responses,
 * /v1/chat/completions…): records every request and answers from a queue of canned replies.
 */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text: a test may want to see what was not JSON.
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const reply = queue.shift() ?? {
        status: 500,
        json: { error: { message: 'fake-openai: no reply queued', type: 'server_error' } },
      };
      setTimeout(() => answer(res, reply), reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, reply: FakeReply): void {
  if (res.destroyed) return;
  const status = reply.status ?? 200;
  if (reply.sse) {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of reply.sse) res.write(`data: ${JSON.stringify(event)}\n\n`);
    if (reply.done !== false) res.write('data: [DONE]\n\n');
    res.end();
    return;
  }
  if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(reply.text);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(reply.json ?? {}));
}
