import { ACTION_ROUTES, TAB_ROUTES } from './actions.contract.js';
import { KEY_ROUTES, META_ROUTES, SETTINGS_ROUTES } from './admin.contract.js';
import { COMPUTER_ROUTES } from './computers.contract.js';
import { RESPONSE_ROUTES } from './responses.contract.js';
import { EXEC_ROUTES, STREAM_ROUTES } from './streams.contract.js';
import { RECORDING_ROUTES } from './recordings.contract.js';
import { TASK_ROUTES } from './tasks.contract.js';
import { APPROVAL_ROUTES } from './approvals.contract.js';
import { SECRET_ROUTES } from './secrets.contract.js';
import { USAGE_ROUTES } from './usage.contract.js';
import { BACKEND_ROUTES } from './backends.contract.js';
import type { RouteDef } from './route.js';

/**
 * Every route of the API by name: the server registers from it, /openapi.json is generated from
 * it, and the typed client (shared/client/api-client.ts) is derived from it.
 */
export const ROUTES = {
  ...META_ROUTES,
  ...COMPUTER_ROUTES,
  ...ACTION_ROUTES,
  ...TAB_ROUTES,
  ...STREAM_ROUTES,
  ...EXEC_ROUTES,
  ...RESPONSE_ROUTES,
  ...TASK_ROUTES,
  ...RECORDING_ROUTES,
  ...APPROVAL_ROUTES,
  ...SECRET_ROUTES,
  ...USAGE_ROUTES,
  ...BACKEND_ROUTES,
  ...KEY_ROUTES,
  ...SETTINGS_ROUTES,
} as const satisfies Record<string, RouteDef>;

export type Routes = typeof ROUTES;
export type RouteName = keyof Routes;

export const ROUTE_LIST: readonly RouteDef[] = Object.values(ROUTES);
