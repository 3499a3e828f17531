import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';
import { sendFile } from './send-file.js';

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
  | 'computers.downloads'
  | 'computers.download'
  | 'environments.delete'
> => ({
  'computers.create': ({ body, principal }) => core.computers.create(principal.org, body),
  'computers.list': ({ query, principal }) =>
    query.type === 'persistent'
      ? core.environments.list(principal.org)
      : core.computers.list(principal.org),
  'computers.get': ({ params, principal }) => core.computers.view(principal.org, params.id),
  'computers.delete': ({ params, principal, requester }) =>
    core.computers.delete(principal.org, params.id, requester),
  'computers.status': ({ params, principal }) => core.computers.status(principal.org, params.id),
  'computers.keepalive': ({ params, principal }) =>
    core.computers.keepalive(principal.org, params.id),
  'computers.downloads': async ({ params, principal }) => ({
    data: await core.computers.downloads(principal.org, params.id).list(),
  }),
  'computers.download': async ({ params, principal, res }) => {
    const path = await core.computers.downloads(principal.org, params.id).path(params.name);
    // As bytes to save, never shown inline: a downloaded page must not run on Benchtop's origin.
    res.set('x-content-type-options', 'nosniff');
    await sendFile(res, path, 'application/octet-stream', params.name);
  },
  'environments.delete': ({ params, principal }) =>
    core.environments.delete(principal.org, params.id),
});
