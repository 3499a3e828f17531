import type { Request, Response } from 'express';
import { z } from 'zod';
import {
  ACTION_ENDPOINTS,
  ActionResult,
  BatchBody,
  BatchResult,
  ComputerAction,
  ExecuteBody,
  MAX_BATCH_ACTIONS,
} from '../../../shared/actions.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError, invalidRequest } from '../../core/errors.js';
import { normalizeAction } from '../../core/computers/normalize-action.js';
import type { Routes } from '../route-spec.js';
import { parseComputerAction } from '../validate.js';

export function actionRoutes(routes: Routes, core: Core): void {
  const tag = 'actions';

  for (const [segment, { type, schema, toAction, toParam }] of Object.entries(ACTION_ENDPOINTS)) {
    routes.add(
      {
        method: 'post',
        path: `/computers/:id/${segment}`,
        tag,
        summary: `Perform ${type} on the computer`,
        body: schema,
        response: ActionResult,
      },
      async ({ body, params, principal, retried }) => {
        const session = core.computers.getRunning(principal.org, params.id!);
        const action = (toAction as (body: object) => ComputerAction)(body);
        try {
          return await core.actions.run(session, { ...normalizeAction(action), retried });
        } catch (error) {
          throw error instanceof BenchtopError && error.param
            ? error.renamed((path) => toParam(path.join('.')).split('.'))
            : error;
        }
      },
    );
  }

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/execute',
      tag,
      summary: 'Perform any ComputerAction, given as {action} or bare',
      body: z.unknown(),
      bodyDoc: ExecuteBody,
      response: ActionResult,
    },
    ({ body, params, principal, retried }) => {
      const wrapped = typeof body === 'object' && body !== null && 'action' in body;
      const wire = wrapped
        ? parseComputerAction(body.action, 'action.')
        : parseComputerAction(body);
      const session = core.computers.getRunning(principal.org, params.id!);
      const request = normalizeAction(wire, wrapped ? 'action.' : '');
      return core.actions.run(session, { ...request, retried });
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/batch',
      tag,
      summary: 'Run actions in order, stopping at the first failure',
      body: z.unknown(),
      bodyDoc: BatchBody,
      response: BatchResult,
    },
    ({ body, params, principal, retried, req, res }) => {
      const actions = (body as { actions?: unknown } | undefined)?.actions;
      if (!Array.isArray(actions))
        throw invalidRequest('actions must be a list of actions', 'actions');
      if (actions.length > MAX_BATCH_ACTIONS) {
        throw invalidRequest(`a batch holds at most ${MAX_BATCH_ACTIONS} actions`, 'actions');
      }
      // Everything is validated before anything runs.
      const requests = actions.map((action, index) =>
        normalizeAction(parseComputerAction(action, `actions.${index}.`), `actions.${index}.`),
      );
      const session = core.computers.getRunning(principal.org, params.id!);
      // Undefined once the client has gone: there is nobody to answer.
      return core.actions.batch(session, requests, {
        body,
        retried,
        closed: closedSignal(req, res),
      });
    },
  );
}

/** Aborted when the client goes away before its answer is complete. */
function closedSignal(req: Request, res: Response): AbortSignal {
  const controller = new AbortController();
  if (req.socket.destroyed) controller.abort();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
