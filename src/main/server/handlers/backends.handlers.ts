import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';

/** docs/API.md §17: where browser computers run, and how full each place is. */
export const backendHandlers = (core: Core): Pick<Handlers, 'backends.list'> => ({
  'backends.list': () => core.backends.list(),
});
