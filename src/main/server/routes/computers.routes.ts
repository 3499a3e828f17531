import { z } from 'zod';
import {
  Computer,
  ComputerStatus,
  CreateComputerBody,
  Environment,
  KeepaliveResult,
  ListComputersQuery,
} from '../../../shared/computers.js';
import type { Core } from '../../core/create-core.js';
import { NO_CONTENT, type Routes } from '../route-spec.js';

export function computerRoutes(routes: Routes, core: Core): void {
  const tag = 'computers';

  routes.add(
    {
      method: 'post',
      path: '/computers',
      tag,
      summary: 'Create a computer',
      body: CreateComputerBody,
      response: Computer,
    },
    async ({ body, principal }) =>
      (await core.computers.create(principal.org, body)).view(core.baseUrl),
  );

  routes.add(
    {
      method: 'get',
      path: '/computers',
      tag,
      summary:
        "List the organization's running computers, or its saved environments with type=persistent",
      query: ListComputersQuery,
      response: z.union([z.array(Computer), z.array(Environment)]),
    },
    ({ query, principal }) =>
      query.type === 'persistent'
        ? core.environments.list(principal.org)
        : core.computers.list(principal.org).map((session) => session.view(core.baseUrl)),
  );

  routes.add(
    {
      method: 'get',
      path: '/computers/:id',
      tag,
      summary: 'Retrieve a computer (also after it ended)',
      response: Computer,
    },
    ({ params, principal }) => core.computers.get(principal.org, params.id!).view(core.baseUrl),
  );

  routes.add(
    { method: 'delete', path: '/computers/:id', tag, summary: 'End a computer (idempotent)' },
    async ({ params, principal }) => {
      await core.computers.delete(principal.org, params.id!);
      return NO_CONTENT;
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/computers/:id/status',
      tag,
      summary: 'Status and lifetimes of a computer',
      response: ComputerStatus,
    },
    ({ params, principal }) => core.computers.get(principal.org, params.id!).statusView(),
  );

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/keepalive',
      tag,
      summary: 'Count as activity',
      response: KeepaliveResult,
    },
    ({ params, principal }) => {
      const session = core.computers.keepalive(principal.org, params.id!);
      return { status: 'running', idle_expires_at: session.statusView().idle_expires_at };
    },
  );
}
