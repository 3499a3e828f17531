import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import type { Principal } from '../core/store/key-store.js';
import { parseWith } from './validate.js';

export type RouteContext<B, Q> = {
  body: B;
  query: Q;
  params: Record<string, string>;
  principal: Principal;
  requestId: string;
  /** The SDK re-sent this request (x-stainless-retry-count above 0). */
  retried: boolean;
  req: Request;
  res: Response;
};

export type RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> = {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express syntax: /computers/:id */
  path: string;
  summary: string;
  tag: string;
  body?: B;
  /** The documented body, when the handler validates parts itself with schemas it is made of. */
  bodyDoc?: z.ZodType;
  query?: Q;
  /** Documented response schema (of each line, for NDJSON); omitted for 204 and binary answers. */
  response?: z.ZodType;
  /** Content type of a non-JSON success answer. */
  produces?: string;
  public?: boolean;
};

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

/** Returned by a handler that answers 204 No Content. */
export const NO_CONTENT = Symbol('no content');

export type RegisteredRoute = RouteSpec<z.ZodType | undefined, z.ZodType | undefined>;

/**
 * Registers routes so that the schema that validates a request is the one the OpenAPI
 * document shows. A handler returns the JSON answer, NO_CONTENT, or undefined when it answered
 * itself (streams, images).
 */
export class Routes {
  readonly registered: RegisteredRoute[] = [];

  constructor(private readonly router: Router) {}

  add<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    spec: RouteSpec<B, Q>,
    handler: (ctx: RouteContext<Infer<B>, Infer<Q>>) => unknown,
  ): void {
    this.registered.push(spec as RegisteredRoute);
    this.router[spec.method](spec.path, async (req, res) => {
      const ctx = {
        body: (spec.body ? parseWith(spec.body, req.body ?? {}) : undefined) as Infer<B>,
        query: (spec.query ? parseWith(spec.query, req.query) : undefined) as Infer<Q>,
        params: req.params as Record<string, string>,
        principal: res.locals.principal as Principal,
        requestId: res.locals.requestId as string,
        retried: Number(req.headers['x-stainless-retry-count']) > 0,
        req,
        res,
      };
      const answer = await handler(ctx);
      if (answer === NO_CONTENT) res.status(204).end();
      else if (answer !== undefined) res.json(answer);
    });
  }
}
