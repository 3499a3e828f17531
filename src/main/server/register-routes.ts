import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { MAX_ID_LENGTH, type RouteDef } from '../../shared/contract/route.js';
import { ROUTE_LIST, ROUTES, type RouteName, type Routes } from '../../shared/contract/routes.js';
import { BenchtopError, notFound } from '../core/errors.js';
import type { Principal } from '../core/store/key-store.js';
import { whoAsked } from './client-sdk.js';
import { endKept } from './keep-waiting.js';
import { NdjsonWriter } from './ndjson.js';
import { openSse, type SseStream } from './sse.js';
import { parseWith } from './validate.js';

type Part<R, K extends 'params' | 'query' | 'body'> = R extends { [P in K]: infer S }
  ? S extends z.ZodType
    ? z.output<S>
    : never
  : undefined;

export type HandlerContext<R extends RouteDef> = {
  params: Part<R, 'params'>;
  query: Part<R, 'query'>;
  body: Part<R, 'body'>;
  /** Whose key it is (undefined only on public routes). */
  principal: Principal;
  requestId: string;
  /** The SDK re-sent this request (x-stainless-retry-count above 0). */
  retried: boolean;
  /**
   * Who sent it, for a person: the SDK or program and the key's prefix, or a person in the window
   * (an approval, a computer's `ended_by` and a task's steering events show it).
   */
  readonly requester: string;
  /** Aborted when the client goes away before its answer is complete. */
  readonly closed: AbortSignal;
  /** Opens the route's event stream; in tests every event is checked against the contract. */
  openEvents: () => SseStream;
  /** The route's NDJSON answer; in tests every line is checked against the contract. */
  ndjson: () => NdjsonWriter;
  req: Request;
  res: Response;
};

/**
 * What a handler gives back: the JSON answer of a json route (undefined when it answered
 * itself, as a stream, or nobody is left to answer); nothing for the other kinds.
 */
type Answered<R extends RouteDef> = R['answer'] extends { kind: 'json'; schema: infer S }
  ? (S extends z.ZodType ? z.input<S> : never) | undefined
  : void;

export type Handler<R extends RouteDef> = (
  ctx: HandlerContext<R>,
) => Answered<R> | Promise<Answered<R>>;

/** One handler per route of the contract, by route name. */
export type Handlers = { [N in RouteName]: Handler<Routes[N]> };

export type RegisterOptions = {
  /** Check every answer against the route's response schema (tests: a mismatch is a 500). */
  validateAnswers: boolean;
  log: (message: string) => void;
};

/** Express syntax of an OpenAPI path: /computers/{id} → /computers/:id. */
const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * Mounts every route of the contract on one of two routers: public routes (no key) and the rest.
 * Each request's params, query and body are validated with the route's schemas before its
 * handler runs; with `validateAnswers`, so is what it answers.
 */
export function registerRoutes(
  handlers: Handlers,
  options: RegisterOptions,
): { publicRoutes: Router; routes: Router } {
  checkHandlers(handlers);
  const publicRoutes = Router();
  const routes = Router();
  for (const [name, route] of Object.entries(ROUTES) as Array<[RouteName, RouteDef]>) {
    const handler = handlers[name] as unknown as Handler<RouteDef>;
    const router = route.public ? publicRoutes : routes;
    router[route.method](expressPath(route.path), async (req, res) => {
      const check = options.validateAnswers ? answerCheck(route, options.log) : undefined;
      const ctx = context(route, req, res, check);
      if (!ctx) return;
      const answer = await handler(ctx);
      if (route.answer.kind === 'empty') {
        res.status(204).end();
        return;
      }
      if (answer === undefined) return;
      const mismatch = check?.(
        route.answer.kind === 'json' ? route.answer.schema : undefined,
        answer,
      );
      if (mismatch) throw new BenchtopError('internal', mismatch);
      if (!endKept(res, answer)) res.json(answer);
    });
  }
  // Under a public route's folder (/screenshots/…) no path needs a key, matched or not.
  for (const route of ROUTE_LIST) {
    const folder = route.path.split('{')[0]!;
    if (route.public && folder !== route.path && folder.endsWith('/')) {
      publicRoutes.use(folder, (req, _res, next) => {
        next(
          notFound(
            `no route ${req.method} ${req.originalUrl.split('?')[0]}; see GET /openapi.json`,
          ),
        );
      });
    }
  }
  return { publicRoutes, routes };
}

/** Every route has exactly one handler, and every handler a route: checked at startup. */
function checkHandlers(handlers: Handlers): void {
  const missing = Object.keys(ROUTES).filter(
    (name) => typeof handlers[name as RouteName] !== 'function',
  );
  const extra = Object.keys(handlers).filter((name) => !(name in ROUTES));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `route handlers do not match the contract: ${[
        missing.length > 0 && `no handler for ${missing.join(', ')}`,
        extra.length > 0 && `no route for ${extra.join(', ')}`,
      ]
        .filter(Boolean)
        .join('; ')}`,
    );
  }
}

type Check = (schema: z.ZodType | undefined, value: unknown) => string | undefined;

/** A check of answers against the contract: the mismatch (logged), or undefined. */
function answerCheck(route: RouteDef, log: (message: string) => void): Check {
  return (schema, value) => {
    if (!schema) return undefined;
    const result = schema.safeParse(value);
    if (result.success) return undefined;
    const issues = result.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(answer)'}: ${issue.message}`)
      .join('; ');
    const message = `the answer of ${route.name} (${route.method.toUpperCase()} ${route.path}) does not match the contract: ${issues}`;
    log(message);
    return message;
  };
}

/** The handler's context, or undefined when bad input was already answered (NDJSON error line). */
function context(
  route: RouteDef,
  req: Request,
  res: Response,
  check: Check | undefined,
): HandlerContext<RouteDef> | undefined {
  const params = route.params
    ? parseParams(route.params, req.params as Record<string, string>)
    : undefined;
  const query = route.query ? parseWith(route.query, req.query) : undefined;
  let body: unknown;
  try {
    body = route.body ? parseWith(route.body, req.body ?? {}) : undefined;
  } catch (error) {
    // NDJSON answers carry bad input as their one error line (the SDKs read the stream).
    if (route.answer.kind !== 'ndjson' || !isInvalidRequest(error)) throw error;
    new NdjsonWriter(res).only({ type: 'error', code: 'invalid_request', message: error.message });
    return undefined;
  }
  let closed: AbortSignal | undefined;
  return {
    params: params as never,
    query: query as never,
    body: body as never,
    principal: res.locals.principal as Principal,
    requestId: res.locals.requestId as string,
    retried: Number(req.headers['x-stainless-retry-count']) > 0,
    get requester() {
      return whoAsked(req.headers, res.locals.principal as Principal);
    },
    get closed() {
      closed ??= closedSignal(req, res);
      return closed;
    },
    openEvents: () => checkedEvents(openSse(req, res), res, route, check),
    ndjson: () => {
      const line = route.answer.kind === 'ndjson' ? route.answer.line : undefined;
      return new NdjsonWriter(res, check && ((value) => check(line, value)));
    },
    req,
    res,
  };
}

function isInvalidRequest(error: unknown): error is BenchtopError {
  return error instanceof BenchtopError && error.code === 'invalid_request';
}

/** An id the contract cannot have handed out is not found, like one it did and forgot. */
export function parseParams(schema: z.ZodObject, params: Record<string, string>): unknown {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const name = String(result.error.issues[0]!.path[0] ?? 'id');
  const value = params[name] ?? '';
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  throw notFound(
    `no ${name} "${shown}": ids are 1 to ${MAX_ID_LENGTH} letters, digits, "_", "-" or "."`,
    [name],
  );
}

/** Aborted when the client goes away before its answer is complete. */
function closedSignal(req: Request, res: Response): AbortSignal {
  const controller = new AbortController();
  if (req.socket.destroyed) controller.abort();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The stream, its events checked against the route's event schema when asked to. */
function checkedEvents(
  stream: SseStream,
  res: Response,
  route: RouteDef,
  check: Check | undefined,
): SseStream {
  if (!check) return stream;
  const schema =
    route.answer.kind === 'sse'
      ? route.answer.event
      : route.answer.kind === 'json'
        ? route.answer.events
        : undefined;
  // A stream cannot turn into a 500 once it started: a wrong event ends it, which fails the test.
  const valid = (data: unknown) => {
    if (!check(schema, data)) return true;
    res.destroy();
    return false;
  };
  return {
    send: (data, event) => {
      if (valid(data)) stream.send(data, event);
    },
    sendLatest: (data) => {
      if (valid(data)) stream.sendLatest(data);
    },
    onClose: (dispose) => stream.onClose(dispose),
    end: () => stream.end(),
    get closed() {
      return stream.closed;
    },
  };
}
