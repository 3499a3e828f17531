import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';
import { requireOwner } from './admin.handlers.js';

type ApprovalRouteName =
  | 'policies.get'
  | 'policies.put'
  | 'approvals.list'
  | 'approvals.get'
  | 'approvals.approve'
  | 'approvals.deny'
  | 'attention.list'
  | 'attention.dismiss';

/** docs/API.md §14: policies, approvals of held actions, and what waits for a person. */
export const approvalHandlers = (core: Core): Pick<Handlers, ApprovalRouteName> => ({
  'policies.get': () => core.settings.policies,
  // Policies gate every organization's computers: only the machine's owner sets them.
  'policies.put': ({ body, principal }) => {
    requireOwner(principal);
    core.settingsService.update({ policies: body });
    return core.settings.policies;
  },
  'approvals.list': ({ query, principal }) => core.approvals.list(principal.org, query),
  'approvals.get': ({ params, principal }) => core.approvals.get(principal.org, params.id),
  'approvals.approve': ({ params, body, principal }) =>
    core.approvals.approve(principal.org, params.id, body.note),
  'approvals.deny': ({ params, body, principal }) =>
    core.approvals.deny(principal.org, params.id, body.note),
  'attention.list': ({ principal }) => core.attention.list(principal.org),
  'attention.dismiss': ({ body, principal }) => core.attention.dismiss(principal.org, body.task_id),
});
