import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  firstEventThenRest,
  forwardChatCompletions,
  postForEvents,
  type ProviderEndpoint,
} from '../../src/main/core/models/provider-http.js';
import { modelFailure } from '../helpers/provider-harness.js';

/** A server that answers every request by handing the response to `answer`. */
let server: Server | undefined;
async function serve(answer: (res: ServerResponse) => void): Promise<ProviderEndpoint> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    label: 'the fake',
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: {},
    timeoutMs: 5000,
    secrets: ['sk-secret'],
    authHint: 'check the key',
  };
}
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const signal = new AbortController().signal;

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
    expect(await all(postForEvents(endpoint, {}, signal))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('names an event that is not JSON, without the key', async () => {
    const endpoint = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: sk-secret is not json\n\n');
    });
    const error = await modelFailure(all(postForEvents(endpoint, {}, signal)), 'sk-secret');
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
    const call = forwardChatCompletions(endpoint, { messages: [], stream: true }, signal);
    expect(await modelFailure(call)).toMatchObject({ kind: 'auth' });
  });

  it('refuses a non-stream answer that is not a chat completion', async () => {
    const endpoint = await serve((res) => res.writeHead(200).end('{"object":"list"}'));
    const call = forwardChatCompletions(endpoint, { messages: [] }, signal);
    const error = await modelFailure(call);
    expect(error).toMatchObject({ kind: 'bad_answer' });
    expect(error.message).toContain('not a chat completion');
  });
});
