import { createParser } from 'eventsource-parser';
import { ChatCompletion, type ChatCompletionBody } from '../../../shared/responses.js';
import { ModelError, type ChatReply } from './model-provider.js';

export type ProviderEndpoint = {
  /** Named in messages: "OpenAI", "the Lightcone cloud"… */
  label: string;
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Secrets that must never appear in a message (the API key). */
  secrets: string[];
  /** What to tell the user when the key is refused: "check OPENAI_API_KEY". */
  authHint: string;
};

const MAX_ERROR_DETAIL = 300;

/** POSTs JSON and returns the parsed JSON answer; every failure becomes a ModelError. */
export async function postJson(
  endpoint: ProviderEndpoint,
  body: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  const { response, timer } = await send(endpoint, body, signal);
  let text: string;
  try {
    text = await readText(endpoint, response, signal, timer);
  } finally {
    timer.clear();
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ModelError(
      'bad_answer',
      `${endpoint.label} answered with something that is not JSON: ${detail(endpoint, text)}`,
    );
  }
}

/**
 * POSTs JSON asking for an SSE answer and yields the JSON data of each event; `[DONE]` ends it.
 * The timeout covers the wait for the first byte of the answer, not the whole stream.
 */
export async function* postForEvents(
  endpoint: ProviderEndpoint,
  body: unknown,
  signal: AbortSignal,
): AsyncGenerator<Record<string, unknown>> {
  const { response, timer } = await send(endpoint, body, signal);
  timer.clear();
  const decoder = new TextDecoder();
  const received: string[] = [];
  const parser = createParser({ onEvent: (event) => void received.push(event.data) });
  for await (const chunk of chunksOf(endpoint, response, signal)) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const data of received.splice(0)) {
      if (!data) continue;
      if (data === '[DONE]') return;
      try {
        yield JSON.parse(data) as Record<string, unknown>;
      } catch {
        throw new ModelError(
          'bad_answer',
          `${endpoint.label} streamed an event that is not JSON: ${detail(endpoint, data)}`,
        );
      }
    }
  }
}

/**
 * Forwards an OpenAI chat-completions body and hands back the answer: the completion, or its
 * stream of chunks. A stream's first chunk is awaited here, so a refused key or a dead server
 * fails the call itself rather than a stream the caller has already begun to answer with.
 */
export async function forwardChatCompletions(
  endpoint: ProviderEndpoint,
  body: ChatCompletionBody,
  signal: AbortSignal,
): Promise<ChatReply> {
  if (body.stream) {
    return {
      kind: 'stream',
      chunks: await firstEventThenRest(postForEvents(endpoint, body, signal)),
    };
  }
  const answer = await postJson(endpoint, body, signal);
  const completion = ChatCompletion.safeParse(answer);
  if (!completion.success) {
    throw new ModelError(
      'bad_answer',
      `${endpoint.label} answered with something that is not a chat completion: ${detail(endpoint, JSON.stringify(answer) ?? String(answer))}`,
    );
  }
  return { kind: 'json', completion: completion.data };
}

/**
 * Waits for the first event of a stream and returns the whole stream, that event included: the
 * request's failures (refused key, unreachable server) surface here, before anything is streamed.
 */
export async function firstEventThenRest<T>(events: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await events.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* events;
  })();
}

/** The body's bytes; a connection that breaks midway is the provider's failure, named as such. */
async function* chunksOf(
  endpoint: ProviderEndpoint,
  response: Response,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        throw fetchFailure(endpoint, error, signal, undefined, 'answer');
      }
      if (read.done) return;
      yield read.value;
    }
  } finally {
    // A consumer that stops early must not leave the provider's connection open.
    void reader.cancel().catch(() => {});
  }
}

type Timer = { readonly signal: AbortSignal; readonly expired: boolean; clear(): void };

function startTimer(ms: number): Timer {
  const controller = new AbortController();
  let expired = false;
  const handle = setTimeout(() => {
    expired = true;
    controller.abort(new Error('timed out'));
  }, ms);
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear: () => clearTimeout(handle),
  };
}

async function send(endpoint: ProviderEndpoint, body: unknown, signal: AbortSignal) {
  const timer = startTimer(endpoint.timeoutMs);
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...endpoint.headers },
      body: JSON.stringify(body),
      signal: AbortSignal.any([signal, timer.signal]),
    });
  } catch (error) {
    timer.clear();
    throw fetchFailure(endpoint, error, signal, timer);
  }
  if (response.ok) return { response, timer };
  const text = await readText(endpoint, response, signal, timer)
    .catch(() => '')
    .finally(() => timer.clear());
  const status = `HTTP ${response.status}`;
  if (response.status === 401 || response.status === 403) {
    throw new ModelError(
      'auth',
      `${endpoint.label} refused the API key (${status}); ${endpoint.authHint}`,
    );
  }
  throw new ModelError(
    'rejected',
    `${endpoint.label} answered ${status}: ${detail(endpoint, upstreamMessage(text))}`,
  );
}

async function readText(
  endpoint: ProviderEndpoint,
  response: Response,
  signal: AbortSignal,
  timer: Timer,
) {
  try {
    return await response.text();
  } catch (error) {
    throw fetchFailure(endpoint, error, signal, timer, 'answer');
  }
}

/**
 * What went wrong talking to the provider, in words: `phase` says whether the answer had begun
 * (headers came, then the connection broke) or not.
 */
function fetchFailure(
  endpoint: ProviderEndpoint,
  error: unknown,
  signal: AbortSignal,
  timer: Timer | undefined,
  phase: 'request' | 'answer' = 'request',
): Error {
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : new Error('aborted');
  if (timer?.expired) {
    return new ModelError(
      'timeout',
      `${endpoint.label} did not answer within ${endpoint.timeoutMs / 1000} s (${origin(endpoint)}); raise timeout_ms in its model settings or try again`,
    );
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  // undici's own codes (UND_ERR_SOCKET) mean nothing to a person; its message ("other side
  // closed") does. System codes (ECONNREFUSED) are the clearer of the two.
  const reason =
    (cause?.code?.startsWith('UND_ERR') ? cause.message : cause?.code) ??
    cause?.message ??
    (error as Error).message;
  if (phase === 'answer') {
    return new ModelError(
      'unreachable',
      `${endpoint.label} at ${origin(endpoint)} broke off its answer (${reason}); check that it is still running`,
    );
  }
  if (cause?.code === 'UND_ERR_SOCKET') {
    return new ModelError(
      'unreachable',
      `${endpoint.label} at ${origin(endpoint)} closed the connection without answering (${reason}); check that it is still running`,
    );
  }
  return new ModelError(
    'unreachable',
    `could not reach ${endpoint.label} at ${origin(endpoint)} (${reason}); check that it is running and its base_url`,
  );
}

function origin(endpoint: ProviderEndpoint): string {
  try {
    return new URL(endpoint.url).origin;
  } catch {
    return 'its base_url';
  }
}

/** The error message inside a provider's JSON error body, when there is one. */
function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON: the text itself.
  }
  return text || '(no body)';
}

/** Text from upstream, trimmed and with every secret removed, fit for a message. */
export function detail(endpoint: { secrets: string[] }, text: string): string {
  let clean = text.replace(/\s+/g, ' ').trim();
  for (const secret of endpoint.secrets) {
    if (secret) clean = clean.split(secret).join('[redacted]');
  }
  return clean.length > MAX_ERROR_DETAIL ? `${clean.slice(0, MAX_ERROR_DETAIL)}…` : clean;
}
