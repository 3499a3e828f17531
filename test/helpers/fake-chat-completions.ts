import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received: `body` is the parsed JSON (or the raw text if not JSON). */
export type RecordedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
};

/**
 * What the fake answers with. Default: 200 and `json`. `text` sends a raw body instead (garbage);
 * `events` answers as SSE, each entry one `data:` event (strings sent as they are, anything else
 * as JSON), then `data: [DONE]`; `delayMs` waits before answering (timeouts).
 */
export type CannedReply = {
  status?: number;
  json?: unknown;
  text?: string;
  events?: unknown[];
  delayMs?: number;
};

export type FakeChatCompletions = {
  /** The base URL to configure, ending in /v1: requests go to `${url}/chat/completions`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request; with none queued the fake answers 500. */
  reply(...replies: CannedReply[]): void;
  close(): Promise<void>;
};

/**
 * A fake OpenAI chat-completions server (as vLLM, Ollama or LM Studio serve it) on 127.0.0.1 and
 * a free port: records every request and answers each, whatever its path, from the queue.
 */
export async function startFakeChatCompletions(): Promise<FakeChatCompletions> {
  const requests: RecordedRequest[] = [];
  const queue: CannedReply[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        path: new URL(req.url ?? '/', 'http://fake').pathname,
        headers: req.headers,
        body: parse(raw),
      });
      const reply = queue.shift() ?? {
        status: 500,
        json: { error: { message: 'fake server: no reply queued' } },
      };
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(res, reply);
      }, reply.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
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

function answer(res: ServerResponse, reply: CannedReply) {
  if (res.destroyed) return;
  const status = reply.status ?? 200;
  if (reply.events) {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of reply.events) {
      res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  } else if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': 'text/plain' }).end(reply.text);
  } else {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
  }
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A chat completion as vLLM answers it, around one assistant message. */
export function chatCompletion(
  message: Record<string, unknown>,
  usage = { prompt_tokens: 1200, completion_tokens: 30 },
) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_735_000_000,
    model: 'fake-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, ...message },
        finish_reason: 'stop',
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}
