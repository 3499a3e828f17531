import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export type RecordedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
};

/** One canned answer: JSON, raw text (garbage), or an SSE stream; each may wait first. */
export type FakeReply =
  | { json: unknown; status?: number; delayMs?: number }
  | { text: string; status?: number; delayMs?: number }
  | { events: Array<{ event: string; data: unknown }>; delayMs?: number };

export type FakeAnthropic = {
  /** The base_url to configure: requests go to `${url}/v1/messages`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  reply(...replies: FakeReply[]): void;
  close(): Promise<void>;
};

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'providers', 'anthropic');

/** A recorded Anthropic answer from test/fixtures/providers/anthropic, parsed afresh each time. */
export function anthropicFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as T;
}

/** Anthropic's error body, as the real API sends it with an error status. */
export function anthropicError(status: number, type: string, message: string): FakeReply {
  return { status, json: { type: 'error', error: { type, message }, request_id: 'req_fake' } };
}

/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1: records every request and answers
 * each from the queue (an empty queue answers 500 in Anthropic's error format).
 */
export async function startFakeAnthropic(): Promise<FakeAnthropic> {
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
        // Recorded as text.
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const reply =
        queue.shift() ?? anthropicError(500, 'api_error', 'the fake has no reply queued');
      setTimeout(() => send(res, reply), reply.delayMs ?? 0);
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
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: import('node:http').ServerResponse, reply: FakeReply): void {
  if (res.destroyed) return;
  if ('events' in reply) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const { event, data } of reply.events) {
      res.write(
        `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
      );
    }
    res.end();
  } else if ('json' in reply) {
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.json));
  } else {
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/html' });
    res.end(reply.text);
  }
}
