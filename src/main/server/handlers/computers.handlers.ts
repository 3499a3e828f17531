import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';

export const computerHandlers = (
  core: Core,
): Pick<
  Handlers,
  | 'computers.create'
  | 'computers.list'
  | 'computers.get'
  | 'computers.delete'
  | 'computers.status'
  | 'computers.keepalive'
  | 'environments.delete'
> => ({
  'computers.create': ({ body, principal }) => core.computers.create(principal.org, body),
  'computers.list': ({ query, principal }) =>
    query.type === 'persistent'
      ? core.environments.list(principal.org)
      : core.computers.list(principal.org),
  'computers.get': ({ params, principal }) => core.computers.view(principal.org, params.id),
  'computers.delete': ({ params, principal }) => core.computers.delete(principal.org, params.id),
  'computers.status': ({ params, principal }) => core.computers.status(principal.org, params.id),
  'computers.keepalive': ({ params, principal }) =>
    core.computers.keepalive(principal.org, params.id),
  'environments.delete': ({ params, principal }) =>
    core.environments.delete(principal.org, params.id),
});
