import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';

/**
 * docs/API.md §17: where browser computers run, and how full each place is. The owner's keys
 * count every computer; another organization's count only its own.
 */
export const backendHandlers = (core: Core): Pick<Handlers, 'backends.list'> => ({
  'backends.list': ({ principal }) =>
    core.backends.list(principal.org === 'local' ? undefined : principal.org),
});
