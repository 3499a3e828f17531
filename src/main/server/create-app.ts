import express from 'express';
import type { Core } from '../core/create-core.js';
import type { Principal } from '../core/store/key-store.js';
import { newId } from '../core/ids.js';
import { requireKey } from './auth.js';
import { errorMapper, jsonBody, sendError } from './errors.js';
import { originGuard } from './guards/origin-guard.js';
import { actionHandlers, tabHandlers } from './handlers/actions.handlers.js';
import { adminHandlers } from './handlers/admin.handlers.js';
import { computerHandlers } from './handlers/computers.handlers.js';
import { recordingHandlers } from './handlers/recordings.handlers.js';
import { approvalHandlers } from './handlers/approvals.handlers.js';
import { secretHandlers } from './handlers/secrets.handlers.js';
import { usageHandlers } from './handlers/usage.handlers.js';
import { backendHandlers } from './handlers/backends.handlers.js';
import { responseHandlers } from './handlers/responses.handlers.js';
import { streamHandlers } from './handlers/streams.handlers.js';
import { taskHandlers } from './handlers/tasks.handlers.js';
import { mcpEndpoint } from './mcp-endpoint.js';
import { registerRoutes, type Handlers } from './register-routes.js';
import { setSseOptions, type SseOptions } from './sse.js';
import { uiFiles } from './ui-files.js';
const MAX_BODY_BYTES = 10 * 1024 * 1024;

export type AppOptions = {
  log?: (message: string) => void;
  /** The built window UI served at /ui/ (out/renderer); without it /ui/ says it is not built. */
  uiDir?: string;
  /** Options of every event stream (tests shorten the heartbeat). */
  sse?: SseOptions;
  /**
   * Check every answer against the contract; a mismatch is a 500 naming the route and what
   * differs (default: when NODE_ENV is "test", so every integration test is a contract test).
   */
  validateAnswers?: boolean;
};

/**
 * The Express app: request ids, body parsing, keys, routes, MCP, one error mapper. Does not
 * listen; close() ends what outlives a request (MCP sessions).
 */
export function createApp(core: Core, options: AppOptions = {}) {
  const log = options.log ?? ((message: string) => console.error(message));
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  setSseOptions(app, options.sse ?? {});

  app.use((_req, res, next) => {
    const requestId = newId('req');
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    next();
  });
  const handlers: Handlers = {
    ...adminHandlers(core),
    ...computerHandlers(core),
    ...actionHandlers(core),
    ...tabHandlers(core),
    ...streamHandlers(core),
    ...responseHandlers(core),
    ...taskHandlers(core),
    ...recordingHandlers(core),
    ...approvalHandlers(core),
    ...secretHandlers(core),
    ...usageHandlers(core),
    ...backendHandlers(core),
  };
  const { publicRoutes, routes } = registerRoutes(handlers, {
    validateAnswers: options.validateAnswers ?? process.env.NODE_ENV === 'test',
    log,
  });

  app.use(
    originGuard(
      () => core.settings.server,
      () => new URL(core.baseUrl).hostname,
    ),
  );
  // Routes the contract marks public, and the window's UI, need no key; everything after does.
  app.use(uiFiles(options.uiDir));
  app.use(publicRoutes);
  // The key is checked before the body is read: nobody without one gets 10 MiB parsed.
  app.use(requireKey(core.keys, core.guards));
  app.use(jsonBody(MAX_BODY_BYTES));
  app.use(routes);
  // MCP is a transport, not a route of the contract: one URL speaking JSON-RPC, kept out of
  // ROUTES and the OpenAPI document, behind the same key check, rate and origin guard.
  const mcp = mcpEndpoint(core, log);
  app.use(mcp.router);
  // A computer's WebSocket (computer-socket.ts) is a transport too; its URL asked without the
  // upgrade (the SDKs' retrieve_ws) is told how to open it.
  app.get('/computers/:id/ws', (req, res) => {
    const session = core.computers.get((res.locals.principal as Principal).org, req.params.id);
    sendError(
      res,
      'upgrade_required',
      `${req.path} is a WebSocket: open ws://…/computers/${session.id}/ws with the same Authorization header, send actions as /execute takes them (with an "id" the answer repeats) and receive the answers and the computer's events; see docs/API.md`,
    );
  });

  app.use((req, res) => {
    sendError(res, 'not_found', `no route ${req.method} ${req.path}; see GET /openapi.json`);
  });
  app.use(errorMapper(log));
  return { app, close: () => mcp.close() };
}
