import { z } from 'zod';
import { ErrorBody } from '../../shared/errors.js';
import type { RegisteredRoute } from './route-spec.js';

type JsonSchema = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document, generated from the very schemas the routes validate with. Named
 * schemas (.meta({id})) become components.
 */
export function buildOpenApi(
  routes: RegisteredRoute[],
  info: { version: string; baseUrl: string },
) {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
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
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (route.query) {
      const query = convert(route.query, 'input') as { properties?: Record<string, JsonSchema> };
      for (const [name, schema] of Object.entries(query.properties ?? {}))
        parameters.push({ name, in: 'query', required: false, schema } as never);
    }
    const bodySchema = route.bodyDoc ?? route.body;
    (paths[path] ??= {})[route.method] = {
      summary: route.summary,
      tags: [route.tag],
      ...(route.public && { security: [] }),
      ...(parameters.length && { parameters }),
      ...(bodySchema && {
        requestBody: {
          required: false,
          content: { 'application/json': { schema: convert(bodySchema, 'input') } },
        },
      }),
      responses: {
        ...successResponse(route, convert),
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

function successResponse(
  route: RegisteredRoute,
  convert: (schema: z.ZodType, io: 'output') => JsonSchema,
) {
  if (route.produces) {
    const schema = route.response && { schema: convert(route.response, 'output') };
    return { 200: { description: 'OK', content: { [route.produces]: schema ?? {} } } };
  }
  if (!route.response) return { [route.method === 'delete' ? 204 : 200]: { description: 'OK' } };
  return {
    200: {
      description: 'OK',
      content: { 'application/json': { schema: convert(route.response, 'output') } },
    },
  };
}

function relink(schema: JsonSchema): JsonSchema {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as JsonSchema;
}
