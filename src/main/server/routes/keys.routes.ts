import { ApiKeyList, CreatedApiKey } from '../../../shared/keys.js';
import { Empty } from '../../../shared/common.js';
import type { Core } from '../../core/create-core.js';
import { notFound } from '../../core/errors.js';
import { NO_CONTENT, type Routes } from '../route-spec.js';

/** Benchtop extension: every organization manages its own stored keys. */
export function keyRoutes(routes: Routes, core: Core): void {
  const tag = 'keys';

  routes.add(
    {
      method: 'get',
      path: '/keys',
      tag,
      summary:
        "The caller's organization's stored keys, newest first (keys given in the environment or the window's link are not listed)",
      response: ApiKeyList,
    },
    ({ principal }) => core.keys.list(principal.org),
  );

  routes.add(
    {
      method: 'post',
      path: '/keys',
      tag,
      summary: "A new key for the caller's organization; the key is shown only in this answer",
      body: Empty,
      response: CreatedApiKey,
    },
    ({ principal }): CreatedApiKey => {
      const { key, info } = core.keys.create(principal.org);
      return { key, ...info };
    },
  );

  routes.add(
    {
      method: 'delete',
      path: '/keys/:id',
      tag,
      summary: 'Revoke a key of the caller’s organization: it stops working at once',
    },
    ({ params, principal }) => {
      if (!core.keys.revoke(params.id!, principal.org)) {
        throw notFound(`no key ${params.id}; see GET /keys`, 'id');
      }
      return NO_CONTENT;
    },
  );
}
