import { ActionResult, NewTabBody } from '../../../shared/actions.js';
import type { Core } from '../../core/create-core.js';
import { newId } from '../../core/ids.js';
import { normalizeUrl } from '../../core/computers/normalize-action.js';
import type { Action } from '../../core/computers/action.js';
import type { Routes } from '../route-spec.js';

export function tabRoutes(routes: Routes, core: Core): void {
  const tag = 'tabs';
  const run = (org: string, id: string, action: Action, requestId = newId('req')) =>
    core.actions.run(core.computers.getRunning(org, id), {
      action,
      requestId,
      includeContext: false,
      fieldPrefix: '',
    });

  routes.add(
    {
      method: 'get',
      path: '/computers/:id/tabs',
      tag,
      summary: 'List tabs in opening order',
      response: ActionResult,
    },
    ({ params, principal }) => run(principal.org, params.id!, { type: 'list_tabs' }),
  );

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/tabs',
      tag,
      summary: 'Open a tab and make it main',
      body: NewTabBody,
      response: ActionResult,
    },
    ({ body, params, principal }) =>
      run(
        principal.org,
        params.id!,
        { type: 'new_tab', url: body.url && normalizeUrl(body.url, 'url') },
        body.request_id,
      ),
  );

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/tabs/:tab_id/switch',
      tag,
      summary: 'Make a tab the main tab',
      response: ActionResult,
    },
    ({ params, principal }) =>
      run(principal.org, params.id!, { type: 'switch_tab', tabId: params.tab_id! }),
  );

  routes.add(
    {
      method: 'delete',
      path: '/computers/:id/tabs/:tab_id',
      tag,
      summary: 'Close a tab',
      response: ActionResult,
    },
    ({ params, principal }) =>
      run(principal.org, params.id!, { type: 'close_tab', tabId: params.tab_id! }),
  );
}
