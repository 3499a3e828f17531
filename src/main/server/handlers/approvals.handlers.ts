import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';
import { BenchtopError } from '../../core/errors.js';

type ApprovalRouteName =
  | 'policies.get'
  | 'policies.put'
  | 'approvals.list'
  | 'approvals.get'
  | 'approvals.approve'
  | 'approvals.deny'
  | 'attention.list';

// WIP on the base branch only: replaced by the real handlers before anything lands on main.
const todo = () => {
  throw new BenchtopError('internal', 'not built yet');
};

export const approvalHandlers = (_core: Core): Pick<Handlers, ApprovalRouteName> => ({
  'policies.get': todo,
  'policies.put': todo,
  'approvals.list': todo,
  'approvals.get': todo,
  'approvals.approve': todo,
  'approvals.deny': todo,
  'attention.list': todo,
});
