import { z } from 'zod';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How a route answers on success. */
export type Answer =
  /** 200 application/json; `events`: with `stream: true` in the body, SSE of these events instead. */
  | { kind: 'json'; schema: z.ZodType; events?: z.ZodType }
  /** 204 No Content. */
  | { kind: 'empty' }
  /** 200 text/event-stream; `event` is the JSON data of every event. */
  | { kind: 'sse'; event: z.ZodType }
  /** 200 application/x-ndjson; `line` is every line. Bad input is one error line, still 200. */
  | { kind: 'ndjson'; line: z.ZodType }
  /** 200 with bytes of this content type. */
  | { kind: 'binary'; contentType: string };

export type RouteDef = {
  /** Unique; handlers and the typed client address the route by it. */
  name: string;
  method: Method;
  /** OpenAPI style: /computers/{id}. */
  path: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  answer: Answer;
  /** Served without an API key. */
  public?: boolean;
  summary: string;
  tag: string;
};

export const json = <S extends z.ZodType>(schema: S) => ({ kind: 'json', schema }) as const;
export const jsonOrEvents = <S extends z.ZodType, E extends z.ZodType>(schema: S, events: E) =>
  ({ kind: 'json', schema, events }) as const;
export const empty = { kind: 'empty' } as const;
export const sse = <E extends z.ZodType>(event: E) => ({ kind: 'sse', event }) as const;
export const ndjson = <L extends z.ZodType>(line: L) => ({ kind: 'ndjson', line }) as const;
export const binary = <C extends string>(contentType: C) =>
  ({ kind: 'binary', contentType }) as const;

/** A route entry, its literal types kept for the handlers and the client. */
export const route = <const R extends RouteDef>(def: R): R => def;

/** Ids in paths: what Benchtop hands out (`comp_…`, `tab_…`, `task_…`) and nothing a path could abuse. */
export const MAX_ID_LENGTH = 200;
export const Id = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH)
  .regex(/^[\w.-]+$/, 'must be letters, digits, "_", "-" or "."');

export const IdParams = z.object({ id: Id });
export const TabParams = z.object({ id: Id, tab_id: Id });
