import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/shared/contract/routes.js';
import { errorMapper } from '../../src/main/server/errors.js';
import { registerRoutes, type Handlers } from '../../src/main/server/register-routes.js';

/** Every route answering `answer` (a stand-in for core), on a real server on port 0. */
async function serve(answer: unknown, validateAnswers: boolean) {
  const logged: string[] = [];
  const handlers = Object.fromEntries(
    Object.keys(ROUTES).map((name) => [name, () => answer]),
  ) as unknown as Handlers;
  const { publicRoutes, routes } = registerRoutes(handlers, {
    validateAnswers,
    log: (line) => logged.push(line),
  });
  const app = express();
  app.use((_req, res, next) => {
    res.locals.requestId = 'req_test';
    res.locals.principal = { org: 'local' };
    next();
  });
  app.use(
    publicRoutes,
    routes,
    errorMapper(() => {}),
  );
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, logged };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

describe('registerRoutes', () => {
  it('refuses to start when a route has no handler, or a handler no route', () => {
    const handlers = Object.fromEntries(
      Object.keys(ROUTES)
        .filter((name) => name !== 'tasks.list')
        .map((name) => [name, () => undefined]),
    );
    expect(() =>
      registerRoutes({ ...handlers, 'tasks.lsit': () => undefined } as unknown as Handlers, {
        validateAnswers: false,
        log: () => {},
      }),
    ).toThrow(/no handler for tasks\.list; no route for tasks\.lsit/);
  });

  it('answers an answer that breaks the contract with a 500 naming the route and the issue', async () => {
    const { url, logged } = await serve({ status: 'fine' }, true);
    const response = await fetch(`${url}/health`);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe('internal');
    expect(body.message).toMatch(/meta\.health \(GET \/health\)/);
    expect(body.message).toMatch(/version/);
    expect(logged).toEqual([body.message]);
  });

  it('sends the answer as it is when answers are not checked', async () => {
    const { url } = await serve({ status: 'fine' }, false);
    const response = await fetch(`${url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'fine' });
  });

  it('answers a malformed id with a 404 naming the parameter, before any handler runs', async () => {
    const { url } = await serve({ status: 'ok', version: '1' }, true);
    const response = await fetch(`${url}/computers/${'x'.repeat(201)}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'not_found', param: 'id' });
  });
});
