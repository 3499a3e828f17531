import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  firstEventThenRest,
  forwardChatCompletions,
  postForEvents,
  postJson,
  type ProviderEndpoint,
} from '../../src/main/core/models/provider-http.js';
import type { ModelRetry } from '../../src/main/core/models/model-provider.js';
import { modelFailure } from '../helpers/provider-harness.js';

/**
 * A server that answers every request by handing the response to `answer`, with how many requests
 * came before it.
 */
let server: Server | undefined;
async function serve(
  answer: (res: ServerResponse, earlier: number) => void,
): Promise<ProviderEndpoint> {
  let count = 0;
  server = createServer((req, res) => {
    const earlier = count++;
    req.resume();
    req.on('end', () => answer(res, earlier));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    label: 'the fake',
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: {},
    timeoutMs: 5000,
    retries: 2,
    secrets: ['sk-secret'],
    authHint: 'check the key',
  };
}
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const call = { signal: new AbortController().signal };

async function* stream<T>(items: T[], failure?: Error): AsyncGenerator<T> {
  for (const item of items) yield await Promise.resolve(item);
  if (failure) throw failure;
}

async function all<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('provider streams', () => {
  it('reads CRLF events split anywhere across chunks, comments and [DONE] included', async () => {
    const endpoint = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The \r ends one chunk and its \n starts the next: still one event boundary.
      for (const chunk of [
        ': hello\r\n\r\ndata: {"n":',
        '1}\r',
        '\n\r\ndata: {"n"',
        ':2}\r\n\r\n',
      ]) {
        res.write(chunk);
      }
      res.end('data: [DONE]\r\n\r\ndata: {"n":3}\r\n\r\n');
    });
    expect(await all(postForEvents(endpoint, {}, call))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('names an event that is not JSON, without the key', async () => {
    const endpoint = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: sk-secret is not json\n\n');
    });
    const error = await modelFailure(all(postForEvents(endpoint, {}, call)), 'sk-secret');
    expect(error).toMatchObject({ kind: 'bad_answer' });
    expect(error.message).toContain('[redacted] is not json');
  });

  it('hands back the whole stream after waiting for its first event', async () => {
    expect(await all(await firstEventThenRest(stream([1, 2])))).toEqual([1, 2]);
    await expect(firstEventThenRest(stream([], new Error('refused')))).rejects.toThrow('refused');
  });
});

describe('forwardChatCompletions', () => {
  it('fails the call, not the stream, when the key is refused', async () => {
    const endpoint = await serve((res) => res.writeHead(401).end('{"error":"bad key"}'));
    const forwarded = forwardChatCompletions(endpoint, { messages: [], stream: true }, call);
    expect(await modelFailure(forwarded)).toMatchObject({ kind: 'auth' });
  });

  it('refuses a non-stream answer that is not a chat completion', async () => {
    const endpoint = await serve((res) => res.writeHead(200).end('{"object":"list"}'));
    const forwarded = forwardChatCompletions(endpoint, { messages: [] }, call);
    const error = await modelFailure(forwarded);
    expect(error).toMatchObject({ kind: 'bad_answer' });
    expect(error.message).toContain('not a chat completion');
  });
});

describe('a failure that may pass is tried again', () => {
  /** Answers with `replies` in turn (the last one for every request after), counting requests. */
  async function inTurn(...replies: Array<[number, Record<string, string>, string]>) {
    const seen = { requests: 0 };
    const endpoint = await serve((res, earlier) => {
      seen.requests = earlier + 1;
      const [status, headers, body] = replies[Math.min(earlier, replies.length - 1)]!;
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
    });
    return { endpoint, seen };
  }
  const ok: [number, Record<string, string>, string] = [200, {}, '{"answer":42}'];
  const error = (message: string, code = 'rate_limit_exceeded') =>
    JSON.stringify({ error: { message, type: code, code } });

  it('answers after a rate limit, waiting as the provider asks', async () => {
    const { endpoint, seen } = await inTurn(
      [429, { 'retry-after-ms': '30' }, error('Rate limit reached')],
      [429, { 'retry-after': '0.02' }, error('Rate limit reached')],
      ok,
    );
    const logged: string[] = [];
    const retries: ModelRetry[] = [];
    const told = { ...endpoint, log: (line: string) => logged.push(line) };
    const heard = { ...call, onRetry: (retry: ModelRetry) => retries.push(retry) };
    expect(await postJson(told, {}, heard)).toEqual({ answer: 42 });
    expect(seen.requests).toBe(3);
    expect(logged).toEqual([
      'the fake answered HTTP 429: Rate limit reached; trying again in 30 ms (try 2 of 3)',
      'the fake answered HTTP 429: Rate limit reached; trying again in 20 ms (try 3 of 3)',
    ]);
    // The caller hears the same, one by one (a task shows it on its timeline).
    const said = 'the fake answered HTTP 429: Rate limit reached';
    expect(retries).toEqual([
      { error: said, wait_ms: 30, attempt: 2, attempts: 3 },
      { error: said, wait_ms: 20, attempt: 3, attempts: 3 },
    ]);
  });

  it('tries an overloaded or failing server again after its own backoff, then answers', async () => {
    const { endpoint, seen } = await inTurn(
      [529, {}, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'],
      ok,
    );
    expect(await postJson(endpoint, {}, call)).toEqual({ answer: 42 });
    expect(seen.requests).toBe(2);
  });

  it('gives up after max_retries more tries, saying how often it tried', async () => {
    const { endpoint, seen } = await inTurn([
      503,
      { 'retry-after-ms': '0' },
      error('sk-secret is busy', 'server_error'),
    ]);
    const failure = await modelFailure(postJson(endpoint, {}, call), 'sk-secret');
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toBe('the fake answered HTTP 503: [redacted] is busy (tried 3 times)');
    expect(seen.requests).toBe(3);

    const once = await inTurn([503, {}, error('busy', 'server_error')]);
    const alone = await modelFailure(postJson({ ...once.endpoint, retries: 0 }, {}, call));
    expect(alone.message).toBe('the fake answered HTTP 503: busy');
    expect(once.seen.requests).toBe(1);
  });

  it('does not try again what no wait mends', async () => {
    const cases: Array<[number, Record<string, string>, string]> = [
      [400, {}, error('Invalid image', 'invalid_request_error')],
      [401, {}, error('Incorrect API key', 'invalid_api_key')],
      [404, {}, error('No such model', 'model_not_found')],
      [429, {}, error('You exceeded your current quota', 'insufficient_quota')],
      [503, { 'x-should-retry': 'false' }, error('down for maintenance', 'server_error')],
    ];
    for (const reply of cases) {
      const { endpoint, seen } = await inTurn(reply, ok);
      const failure = await modelFailure(postJson(endpoint, {}, call));
      expect(failure.message, String(reply[0])).not.toContain('tried');
      expect(seen.requests, reply[2]).toBe(1);
      server?.close();
    }
  });

  it('tries again when the provider says so, whatever the status', async () => {
    const { endpoint, seen } = await inTurn(
      [400, { 'x-should-retry': 'true', 'retry-after-ms': '0' }, error('try again', 'x')],
      ok,
    );
    expect(await postJson(endpoint, {}, call)).toEqual({ answer: 42 });
    expect(seen.requests).toBe(2);
  });

  it("fails at once when the asked wait would pass the call's timeout, naming both", async () => {
    const { endpoint, seen } = await inTurn([429, { 'retry-after': '120' }, error('Slow down')]);
    const failure = await modelFailure(postJson(endpoint, {}, call));
    expect(failure.message).toBe(
      'the fake answered HTTP 429: Slow down (it asked for 120 s before another try, longer than timeout_ms, 5 s)',
    );
    expect(seen.requests).toBe(1);
  });

  it('reads a retry-after given as a date', async () => {
    const { endpoint, seen } = await inTurn(
      [429, { 'retry-after': new Date(Date.now() + 600_000).toUTCString() }, error('Later')],
      ok,
    );
    const failure = await modelFailure(postJson(endpoint, {}, call));
    expect(failure.message).toMatch(/asked for (599|600) s before another try/);
    expect(seen.requests).toBe(1);
  });

  it('tries again a connection dropped before any answer', async () => {
    let requests = 0;
    const endpoint = await serve((res, earlier) => {
      requests = earlier + 1;
      if (earlier === 0) res.socket?.destroy();
      else res.writeHead(200).end('{"answer":42}');
    });
    expect(await postJson(endpoint, {}, call)).toEqual({ answer: 42 });
    expect(requests).toBe(2);
  });

  it('stops waiting to try again when the call is cancelled', async () => {
    const { endpoint, seen } = await inTurn([429, { 'retry-after': '30' }, error('Slow down')]);
    const controller = new AbortController();
    const pending = postJson({ ...endpoint, timeoutMs: 60_000 }, {}, { signal: controller.signal });
    await eventuallyTrue(() => seen.requests === 1);
    controller.abort(new Error('the task was cancelled'));
    await expect(pending).rejects.toThrow('the task was cancelled');
    expect(seen.requests).toBe(1);
  });
});

async function eventuallyTrue(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}
