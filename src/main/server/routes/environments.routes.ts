import type { Core } from '../../core/create-core.js';
import { NO_CONTENT, type Routes } from '../route-spec.js';

/** Benchtop extension: saved environments are listed with GET /computers?type=persistent. */
export function environmentRoutes(routes: Routes, core: Core): void {
  routes.add(
    {
      method: 'delete',
      path: '/environments/:id',
      tag: 'environments',
      summary: 'Delete a saved environment (Benchtop extension)',
    },
    async ({ params, principal }) => {
      await core.environments.delete(principal.org, params.id!);
      return NO_CONTENT;
    },
  );
}
