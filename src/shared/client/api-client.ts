import { createParser } from 'eventsource-parser';
import type { z } from 'zod';
import { ROUTES, type RouteName, type Routes } from '../contract/routes.js';

/**
 * The typed client of the Benchtop API, derived from the route table: a route is called by its
 * name with its params, query and body, and answers with the type of its response schema. Only
 * fetch: it runs in the window's renderer, in tests and in the bench alike.
 */

type RouteOf<N extends RouteName> = Routes[N];
type InputOf<S> = S extends z.ZodType ? z.input<S> : never;
type OutputOf<S> = S extends z.ZodType ? z.output<S> : never;

type ParamsPart<R> = R extends { params: z.ZodType }
  ? { params: InputOf<R['params']> }
  : { params?: undefined };
type QueryPart<R> = R extends { query: z.ZodType }
  ? { query?: InputOf<R['query']> }
  : { query?: undefined };
type BodyPart<R> = R extends { body: z.ZodType }
  ? { body?: InputOf<R['body']> }
  : { body?: undefined };

/** What a call takes: the route's params (required when its path has any), query and body. */
export type CallInput<N extends RouteName> = ParamsPart<RouteOf<N>> &
  QueryPart<RouteOf<N>> &
  BodyPart<RouteOf<N>> & {
    signal?: AbortSignal;
    headers?: Record<string, string>;
  };

/** What a call answers: the JSON of its response schema, undefined for 204, the bytes of binary answers, every line of NDJSON. */
export type CallOutput<N extends RouteName> = RouteOf<N>['answer'] extends {
  kind: 'json';
  schema: infer S;
}
  ? OutputOf<S>
  : RouteOf<N>['answer'] extends { kind: 'ndjson'; line: infer L }
    ? OutputOf<L>[]
    : RouteOf<N>['answer'] extends { kind: 'binary' }
      ? Uint8Array
      : undefined;

/** Routes that answer with Server-Sent Events (always, or when the body asks for `stream`). */
export type EventRouteName = {
  [N in RouteName]: RouteOf<N>['answer'] extends { kind: 'sse' } | { events: z.ZodType }
    ? N
    : never;
}[RouteName];

/** Routes `call` answers (everything but the always-streaming ones, which `events` reads). */
export type CallRouteName = Exclude<RouteName, AlwaysSse>;
type AlwaysSse = {
  [N in RouteName]: RouteOf<N>['answer'] extends { kind: 'sse' } ? N : never;
}[RouteName];

type EventSchemaOf<N extends RouteName> = RouteOf<N>['answer'] extends {
  kind: 'sse';
  event: infer E;
}
  ? E
  : RouteOf<N>['answer'] extends { events: infer E }
    ? E
    : never;

/** One Server-Sent Event: its name (undefined for unnamed events) and its JSON data. */
export type ApiEvent<N extends RouteName> = {
  event: string | undefined;
  data: OutputOf<EventSchemaOf<N>>;
};

/** A failed call: the status and the API's error body (message, code, param). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A raw answer, for tests of bad input: whatever came back, parsed as JSON when it is. */
export type RawResponse = {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
};

export type RawOptions = {
  /** Sent as is instead of JSON of `body` (malformed bodies). */
  rawBody?: string;
  /** null: no Content-Type header (default: application/json when a body is sent). */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Another key for this request; null sends none. */
  apiKey?: string | null;
  signal?: AbortSignal;
};

export type ApiClientOptions = {
  /** Where the API is, e.g. http://127.0.0.1:4422 (a path prefix is kept). */
  baseUrl: string;
  /** The key sent as `Authorization: Bearer`; a function is asked on every request. */
  apiKey?: string | null | (() => string | null | undefined);
  fetch?: typeof fetch;
};

export type ApiClient = ReturnType<typeof createApiClient>;

export function createApiClient(options: ApiClientOptions) {
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const base = options.baseUrl.replace(/\/+$/, '');
  const keyOf = () =>
    typeof options.apiKey === 'function' ? options.apiKey() : (options.apiKey ?? undefined);

  const send = (
    method: string,
    path: string,
    body: unknown,
    extra: RawOptions & { accept?: string } = {},
  ): Promise<Response> => {
    const headers: Record<string, string> = { ...extra.headers };
    const key = extra.apiKey === undefined ? keyOf() : extra.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    if (extra.accept) headers.accept = extra.accept;
    const payload = extra.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const contentType =
      extra.contentType === undefined
        ? payload === undefined
          ? undefined
          : 'application/json'
        : extra.contentType;
    if (contentType) headers['content-type'] = contentType;
    return doFetch(`${base}${path}`, {
      method: method.toUpperCase(),
      headers,
      body: payload,
      signal: extra.signal,
    });
  };

  const request = <N extends RouteName>(name: N, input: CallInput<N>, accept?: string) => {
    const route = ROUTES[name];
    const params = (input.params ?? {}) as Record<string, string>;
    const path = route.path.replace(/\{(\w+)\}/g, (_, param: string) => {
      const value = params[param];
      if (value === undefined) throw new TypeError(`${name}: params.${param} is required`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined && value !== null)
        query.set(key, String(value as string | number | boolean));
    }
    const search = query.size > 0 ? `?${query.toString()}` : '';
    return send(route.method, `${path}${search}`, input.body, {
      headers: input.headers,
      signal: input.signal,
      accept,
    });
  };

  return {
    /** Calls a route by name; answers its typed response or throws an ApiError. */
    async call<N extends CallRouteName>(name: N, ...[input]: OptionalIfEmpty<CallInput<N>>) {
      const route = ROUTES[name];
      const response = await request(name, (input ?? {}) as CallInput<N>);
      if (!response.ok) throw await apiError(response);
      switch (route.answer.kind) {
        case 'empty':
          return undefined as CallOutput<N>;
        case 'binary':
          return new Uint8Array(await response.arrayBuffer()) as CallOutput<N>;
        case 'ndjson': {
          const text = await response.text();
          return text
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as unknown) as CallOutput<N>;
        }
        default:
          return (await response.json()) as CallOutput<N>;
      }
    },

    /**
     * The events of a streaming route, as they come; a route that streams on request (`stream`
     * in its body) is asked to. Breaking out of the loop closes the stream.
     */
    async *events<N extends EventRouteName>(
      name: N,
      ...[input]: OptionalIfEmpty<CallInput<N>>
    ): AsyncGenerator<ApiEvent<N>, void, undefined> {
      const route = ROUTES[name];
      const given = (input ?? {}) as CallInput<N>;
      const controller = new AbortController();
      const signal = given.signal
        ? AbortSignal.any([given.signal, controller.signal])
        : controller.signal;
      const body =
        route.answer.kind === 'json' ? { ...(given.body as object), stream: true } : given.body;
      const response = await request(
        name,
        { ...given, body, signal } as CallInput<N>,
        'text/event-stream',
      );
      if (!response.ok) throw await apiError(response);
      try {
        yield* readEvents<ApiEvent<N>>(response);
      } finally {
        controller.abort();
      }
    },

    /** Any request, answered as it came (for tests of bad input and of the HTTP layer). */
    async raw(
      method: string,
      path: string,
      body?: unknown,
      rawOptions: RawOptions = {},
    ): Promise<RawResponse> {
      const response = await send(method, path, body, rawOptions);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? (JSON.parse(text) as unknown) : undefined;
      } catch {
        // Not JSON (an image, an empty 204): callers read text.
      }
      return { status: response.status, headers: response.headers, text, body: parsed };
    },
  };
}

/** Routes without required input can be called without an input object. */
type OptionalIfEmpty<I> = object extends Pick<I, RequiredKeys<I>> ? [input?: I] : [input: I];
type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];

async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text();
  let body: { message?: unknown; code?: unknown; param?: unknown; request_id?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not the API's error body (a proxy in between, a crash): the text is the message.
  }
  return new ApiError(
    response.status,
    typeof body.code === 'string' ? body.code : 'http_error',
    typeof body.message === 'string'
      ? body.message
      : text || `HTTP ${response.status} ${response.statusText}`,
    typeof body.param === 'string' ? body.param : undefined,
    typeof body.request_id === 'string' ? body.request_id : undefined,
  );
}

/** Parses a text/event-stream body into events with JSON data, as they arrive. */
async function* readEvents<E>(response: Response): AsyncGenerator<E, void, undefined> {
  const queue: E[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    onEvent: (message) => {
      try {
        queue.push({ event: message.event, data: JSON.parse(message.data) as unknown } as E);
      } catch {
        failure ??= new Error(`an event's data is not JSON: ${message.data.slice(0, 200)}`);
      }
    },
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value) parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield queue.shift()!;
      if (failure) throw failure;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
