import express, { Router } from 'express';
import type { Core } from '../core/create-core.js';
import { newId } from '../core/ids.js';
import { requireKey } from './auth.js';
import { jsonBody } from './json-body.js';
import { errorMapper, sendError } from './errors.js';
import { originGuard } from './guards/origin-guard.js';
import { Routes } from './route-spec.js';
import { findUiDir, uiFiles } from './ui-files.js';
import { actionRoutes } from './routes/actions.routes.js';
import { computerRoutes } from './routes/computers.routes.js';
import { environmentRoutes } from './routes/environments.routes.js';
import { eventRoutes } from './routes/events.routes.js';
import { execRoutes } from './routes/exec.routes.js';
import { keyRoutes } from './routes/keys.routes.js';
import { modelRoutes } from './routes/models.routes.js';
import { publicRoutes } from './routes/public.routes.js';
import { responseRoutes } from './routes/responses.routes.js';
import { screencastRoutes } from './routes/screencast.routes.js';
import { settingsRoutes } from './routes/settings.routes.js';
import { tabRoutes } from './routes/tabs.routes.js';
import { taskRoutes } from './routes/tasks.routes.js';

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const PUBLIC = /^\/(health$|openapi\.json$|screenshots\/|ui(\/|$))/;

export type AppOptions = {
  log?: (message: string) => void;
  /** The built window UI served at /ui/ (default: found next to the code, see findUiDir). */
  uiDir?: string;
};

/** The Express app: request ids, body parsing, keys, routes, one error mapper. Does not listen. */
export function createApp(core: Core, options: AppOptions = {}) {
  const log = options.log ?? ((message: string) => console.error(message));
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((_req, res, next) => {
    const requestId = newId('req');
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    next();
  });
  // The key is checked before the body is read: nobody without one gets 10 MiB parsed.
  app.use(
    originGuard(
      () => core.settings.server,
      () => new URL(core.baseUrl).hostname,
    ),
  );
  app.use(requireKey(core.keys, (path) => PUBLIC.test(path), core.guards));
  app.use(uiFiles(options.uiDir ?? findUiDir()));
  app.use(jsonBody(MAX_BODY_BYTES));

  const router = Router();
  const routes = new Routes(router);
  publicRoutes(routes, core);
  computerRoutes(routes, core);
  actionRoutes(routes, core);
  tabRoutes(routes, core);
  eventRoutes(routes, core);
  screencastRoutes(routes, core);
  execRoutes(routes, core);
  environmentRoutes(routes, core);
  responseRoutes(routes, core);
  modelRoutes(routes, core);
  taskRoutes(routes, core);
  keyRoutes(routes, core);
  settingsRoutes(routes, core);
  app.use(router);

  app.use((req, res) => {
    sendError(res, 'not_found', `no route ${req.method} ${req.path}; see GET /openapi.json`);
  });
  app.use(errorMapper(log));
  return app;
}
