import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { describeModelRetry, durationText } from '../../../shared/describe-attention.js';
import { ChatCompletion, type ChatCompletionBody } from '../../../shared/responses.js';
import { ModelError, type ChatReply, type ProviderCall } from './model-provider.js';

export type ProviderEndpoint = {
  /** Named in messages: "OpenAI", "the Lightcone cloud"… */
  label: string;
  url: string;
  headers: Record<string, string>;
  /** The whole call's limit, tries again included. */
  timeoutMs: number;
  /** Tries after the first, for failures worth trying again (a rate limit, an overload). */
  retries: number;
  /** Told of each try again: what failed and how long the wait is (no secret in it). */
  log?: (message: string) => void;
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
  call: ProviderCall,
): Promise<unknown> {
  const { signal } = call;
  const { response, timer } = await send(endpoint, body, call);
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
  call: ProviderCall,
): AsyncGenerator<Record<string, unknown>> {
  const { signal } = call;
  const { response, timer } = await send(endpoint, body, call);
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
  call: ProviderCall,
): Promise<ChatReply> {
  if (body.stream) {
    return {
      kind: 'stream',
      chunks: await firstEventThenRest(postForEvents(endpoint, body, call)),
    };
  }
  const answer = await postJson(endpoint, body, call);
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

type Timer = {
  readonly signal: AbortSignal;
  readonly expired: boolean;
  /** When it expires (Date.now() time). */
  readonly deadline: number;
  clear(): void;
};

function startTimer(ms: number): Timer {
  const deadline = Date.now() + ms;
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
    deadline,
    clear: () => clearTimeout(handle),
  };
}

/**
 * Sends the request and hands back an answer that is not an error. A failure that may pass (a
 * rate limit, an overloaded or restarting server, a connection dropped before any answer) is
 * tried again, as the official OpenAI and Anthropic SDKs do: after the wait the provider asks for
 * (`retry-after-ms`, `retry-after`), else 0.5 s, 1 s, 2 s… up to 8 s, and only while the wait
 * still fits in the call's timeout.
 */
async function send(endpoint: ProviderEndpoint, body: unknown, call: ProviderCall) {
  const { signal } = call;
  const timer = startTimer(endpoint.timeoutMs);
  const payload = JSON.stringify(body);
  for (let tries = 1; ; tries++) {
    const outcome = await sendOnce(endpoint, payload, signal, timer);
    if (outcome.response) return { response: outcome.response, timer };
    const wait = outcome.askedMs ?? backoffMs(tries);
    const fits = Date.now() + wait < timer.deadline;
    if (signal.aborted || !outcome.retryable || tries > endpoint.retries || !fits) {
      timer.clear();
      if (signal.aborted) throw abortReason(signal);
      const askedTooLate = outcome.retryable && !fits && outcome.askedMs !== undefined;
      throw afterTries(outcome.error, tries, askedTooLate ? wait : undefined, endpoint);
    }
    const retry = {
      error: outcome.error.message,
      wait_ms: Math.round(wait),
      attempt: tries + 1,
      attempts: endpoint.retries + 1,
    };
    endpoint.log?.(describeModelRetry(retry));
    call.onRetry?.(retry);
    try {
      await sleep(wait, undefined, { signal });
    } catch {
      timer.clear();
      throw abortReason(signal);
    }
  }
}

type Attempt =
  | { response: Response; error?: never }
  | { response?: never; error: Error; retryable: boolean; askedMs?: number };

/** What the SDKs try again: request timeout, conflict, rate limit, and any server error. */
const RETRIED_STATUSES = new Set([408, 409, 429]);
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8000;

async function sendOnce(
  endpoint: ProviderEndpoint,
  payload: string,
  signal: AbortSignal,
  timer: Timer,
): Promise<Attempt> {
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...endpoint.headers },
      body: payload,
      signal: AbortSignal.any([signal, timer.signal]),
    });
  } catch (error) {
    const failure = fetchFailure(endpoint, error, signal, timer);
    // Refused or dropped before any answer; not a timeout (the time is spent) nor a cancel.
    const retryable = failure instanceof ModelError && failure.kind === 'unreachable';
    return { error: failure, retryable };
  }
  if (response.ok) return { response };
  const text = await readText(endpoint, response, signal, timer).catch(() => '');
  const told = response.headers.get('x-should-retry');
  const retryable =
    told === 'true' ||
    (told !== 'false' &&
      (RETRIED_STATUSES.has(response.status) || response.status >= 500) &&
      !outOfQuota(text));
  const askedMs = askedWaitMs(response.headers);
  return {
    error: httpFailure(endpoint, { status: response.status, retryAfterMs: askedMs }, text),
    retryable,
    askedMs,
  };
}

function httpFailure(
  endpoint: ProviderEndpoint,
  upstream: NonNullable<ModelError['upstream']>,
  text: string,
): ModelError {
  const { status } = upstream;
  if (status === 401 || status === 403) {
    return new ModelError(
      'auth',
      `${endpoint.label} refused the API key (HTTP ${status}); ${endpoint.authHint}`,
      upstream,
    );
  }
  return new ModelError(
    'rejected',
    `${endpoint.label} answered HTTP ${status}: ${detail(endpoint, upstreamMessage(text))}`,
    upstream,
  );
}

/** The failure that ended the call, saying how often it was tried and a wait that did not fit. */
function afterTries(
  error: Error,
  tries: number,
  tooLateMs: number | undefined,
  endpoint: ProviderEndpoint,
): Error {
  if (!(error instanceof ModelError) || (tries === 1 && tooLateMs === undefined)) return error;
  const notes = [];
  if (tries > 1) notes.push(`tried ${tries} times`);
  if (tooLateMs !== undefined) {
    notes.push(
      `it asked for ${durationText(tooLateMs)} before another try, longer than timeout_ms, ${durationText(endpoint.timeoutMs)}`,
    );
  }
  return new ModelError(error.kind, `${error.message} (${notes.join('; ')})`, error.upstream);
}

/** 0.5 s before the second try, doubling up to 8 s, less up to a quarter so clients spread out. */
function backoffMs(tries: number): number {
  const full = Math.min(FIRST_BACKOFF_MS * 2 ** (tries - 1), MAX_BACKOFF_MS);
  return full * (1 - Math.random() * 0.25);
}

/** The wait an answer asks for: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as a date. */
function askedWaitMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers.get('retry-after');
  if (!after) return undefined;
  const secondsAfter = Number.parseFloat(after);
  if (Number.isFinite(secondsAfter) && secondsAfter >= 0) return secondsAfter * 1000;
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** OpenAI answers a spent balance with 429 too; no wait refills it. */
function outOfQuota(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; type?: unknown } };
    return body.error?.code === 'insufficient_quota' || body.error?.type === 'insufficient_quota';
  } catch {
    return false;
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
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
  if (signal.aborted) return abortReason(signal);
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
