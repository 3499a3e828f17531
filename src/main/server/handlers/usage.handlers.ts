import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';

/** docs/API.md §15: the ledger of model calls, per organization. */
export const usageHandlers = (core: Core): Pick<Handlers, 'usage.list'> => ({
  'usage.list': ({ query, principal }) => core.ledger.list(principal.org, query),
});
