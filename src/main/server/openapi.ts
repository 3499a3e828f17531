import { z } from 'zod';
import { ErrorBody } from '../../shared/errors.js';
import type { Answer, RouteDef } from '../../shared/contract/route.js';

type JsonSchema = Record<string, unknown>;
type Convert = (schema: z.ZodType, io: 'input' | 'output') => JsonSchema;

/**
 * The OpenAPI 3.1 document, generated from the route table: the very schemas the server
 * validates requests (and, in tests, answers) with. Named schemas (.meta({id})) become components.
 */
export function buildOpenApi(
  routes: readonly RouteDef[],
  info: { version: string; baseUrl: string },
) {
  const components: Record<string, JsonSchema> = {};
  const convert: Convert = (schema, io) => {
    const json = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      target: 'draft-2020-12',
    }) as JsonSchema;
    const { $schema: _ignored, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>))
      components[id] ??= relink(def);
    return relink(rest);
  };
  const errorRef = convert(ErrorBody, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...fieldsOf(route.params, convert).map(([name, schema]) => ({
        name,
        in: 'path',
        required: true,
        schema,
      })),
      ...fieldsOf(route.query, convert).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema,
      })),
    ];
    (paths[route.path] ??= {})[route.method] = {
      operationId: route.name,
      summary: route.summary,
      tags: [route.tag],
      ...(route.public && { security: [] }),
      ...(parameters.length > 0 && { parameters }),
      ...(route.body && {
        requestBody: {
          required: false,
          content: { 'application/json': { schema: convert(route.body, 'input') } },
        },
      }),
      responses: {
        ...successResponse(route.answer, convert),
        default: { description: 'Error', content: { 'application/json': { schema: errorRef } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Benchtop (Lightcone computer-automation API)', version: info.version },
    servers: [{ url: info.baseUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
  };
}

function fieldsOf(schema: z.ZodObject | undefined, convert: Convert): Array<[string, JsonSchema]> {
  if (!schema) return [];
  const json = convert(schema, 'input') as { properties?: Record<string, JsonSchema> };
  return Object.entries(json.properties ?? {});
}

function successResponse(answer: Answer, convert: Convert) {
  const content = (type: string, schema: z.ZodType) => ({
    [type]: { schema: convert(schema, 'output') },
  });
  switch (answer.kind) {
    case 'empty':
      return { 204: { description: 'No Content' } };
    case 'binary':
      return { 200: { description: 'OK', content: { [answer.contentType]: {} } } };
    case 'sse':
      return {
        200: {
          description: 'Server-Sent Events; each event’s data is this JSON',
          content: content('text/event-stream', answer.event),
        },
      };
    case 'ndjson':
      return {
        200: {
          description: 'One JSON object per line',
          content: content('application/x-ndjson', answer.line),
        },
      };
    case 'json':
      return {
        200: {
          description: answer.events
            ? 'OK; with `stream: true`, Server-Sent Events whose data is the event schema'
            : 'OK',
          content: {
            ...content('application/json', answer.schema),
            ...(answer.events && content('text/event-stream', answer.events)),
          },
        },
      };
  }
}

function relink(schema: JsonSchema): JsonSchema {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as JsonSchema;
}
