import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';

type SecretRouteName = 'secrets.create' | 'secrets.list' | 'secrets.delete';

/** docs/API.md §15: the vault; nothing here ever answers a value. */
export const secretHandlers = (core: Core): Pick<Handlers, SecretRouteName> => ({
  'secrets.create': ({ body, principal }) => core.vault.set(principal.org, body.name, body.value),
  'secrets.list': ({ principal }) => core.vault.list(principal.org),
  'secrets.delete': ({ params, principal }) => core.vault.delete(principal.org, params.name),
});
