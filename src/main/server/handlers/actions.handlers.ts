import {
  ACTION_ENDPOINTS,
  DebugEndpointBody,
  type ActionEndpoint,
  type ActionResult,
  type ActionResultOf,
  type ActionType,
  type ComputerAction,
} from '../../../shared/actions.js';
import type { Request } from 'express';
import type { ErrorBody } from '../../../shared/errors.js';
import type { z } from 'zod';
import type { Core } from '../../core/create-core.js';
import { BenchtopError, type FieldPath } from '../../core/errors.js';
import { fromTheWindow } from '../client-sdk.js';
import { keepWaiting } from '../keep-waiting.js';
import type { Handler, Handlers } from '../register-routes.js';

type ActionRouteName = `actions.${ActionEndpoint}` | 'actions.execute' | 'actions.batch';
type TabRouteName = 'tabs.list' | 'tabs.create' | 'tabs.switch' | 'tabs.close';

/** Places a core error about the action where the action sits in the request. */
const placed =
  (place: (path: FieldPath) => FieldPath) =>
  (error: unknown): never => {
    throw error instanceof BenchtopError ? error.renamed(place) : error;
  };

/** /debug takes the command's fields at the top level; the action holds them under `debug`. */
function debugAction({
  tab_id,
  request_id,
  include_context,
  ...debug
}: z.output<typeof DebugEndpointBody>): ComputerAction {
  return { type: 'debug', debug, tab_id, request_id, include_context };
}
const flattenDebug = (path: FieldPath) => (path[0] === 'debug' ? path.slice(1) : path);

/** The window's live view marks the actions a person sends, so the recording can tell them apart. */
const sourceOf = (req: Request): 'live_view' | undefined =>
  fromTheWindow(req.headers) ? 'live_view' : undefined;

/** What a request says about the action it sends: a retry, who sent it, the window's mark. */
const sentBy = (request: {
  retried: boolean;
  requester: string;
  req: Request;
  closed: AbortSignal;
}) => ({
  retried: request.retried,
  requester: request.requester,
  source: sourceOf(request.req),
  // A client that stopped waiting (an SDK's timeout) leaves what it sent: a wait or navigation
  // ends, an action queued or held for a person does not run unless a retry of it comes.
  signal: request.closed,
});

/** An error once a slow action's answer began (see keepWaiting), as the action's own failure. */
const failedAction = (error: ErrorBody): ActionResult => ({
  request_id: error.request_id,
  status: 'error',
  result: {},
  error_message: error.message,
  timestamp: new Date().toISOString(),
});

export function actionHandlers(core: Core): Pick<Handlers, ActionRouteName> {
  const single = Object.fromEntries(
    (Object.keys(ACTION_ENDPOINTS) as ActionEndpoint[]).map((segment) => {
      const { type } = ACTION_ENDPOINTS[segment];
      const handler: Handler<{
        name: string;
        method: 'post';
        path: string;
        params: z.ZodObject<{ id: z.ZodString }>;
        body: z.ZodType<object>;
        answer: { kind: 'json'; schema: z.ZodType };
        summary: string;
        tag: string;
      }> = (request) => {
        const { body, params, principal } = request;
        keepWaiting(request.res, failedAction);
        const action =
          type === 'debug'
            ? debugAction(body as z.output<typeof DebugEndpointBody>)
            : ({ ...body, type } as ComputerAction);
        return core.computers
          .act(principal.org, params.id, action, sentBy(request))
          .catch(placed(type === 'debug' ? flattenDebug : (path) => path));
      };
      return [`actions.${segment}`, handler];
    }),
  ) as unknown as Pick<Handlers, `actions.${ActionEndpoint}`>;

  return {
    ...single,
    'actions.execute': (request) => {
      const { body, params, principal } = request;
      keepWaiting(request.res, failedAction);
      const wrapped = 'action' in body;
      return core.computers
        .act(principal.org, params.id, wrapped ? body.action : body, sentBy(request))
        .catch(placed((path) => (wrapped ? ['action', ...path] : path)));
    },
    // Undefined once the client has gone: there is nobody to answer.
    'actions.batch': ({ body, params, principal, retried, requester, closed, res }) => {
      keepWaiting(res, (error) => ({
        success: false,
        results: [],
        failed_index: null,
        error_message: error.message,
      }));
      return core.computers
        .batch(principal.org, params.id, body.actions, {
          body,
          retried,
          requester,
          signal: closed,
        })
        .catch(placed((path) => ['actions', ...path]));
    },
  };
}

/** The answer of an action of type T (what its result holds is checked against the contract in tests). */
const resultOf = <T extends ActionType>(_type: T, answer: Promise<ActionResult>) =>
  answer as Promise<ActionResultOf<T>>;

export const tabHandlers = (core: Core): Pick<Handlers, TabRouteName> => ({
  'tabs.list': (request) =>
    resultOf(
      'list_tabs',
      core.computers.act(
        request.principal.org,
        request.params.id,
        { type: 'list_tabs' },
        sentBy(request),
      ),
    ),
  'tabs.create': (request) =>
    resultOf(
      'new_tab',
      core.computers.act(
        request.principal.org,
        request.params.id,
        {
          type: 'new_tab',
          url: request.body.url,
          request_id: request.body.request_id,
        },
        sentBy(request),
      ),
    ),
  'tabs.switch': (request) =>
    resultOf(
      'switch_tab',
      core.computers.act(
        request.principal.org,
        request.params.id,
        { type: 'switch_tab', tab_id: request.params.tab_id },
        sentBy(request),
      ),
    ),
  'tabs.close': (request) =>
    resultOf(
      'close_tab',
      core.computers.act(
        request.principal.org,
        request.params.id,
        { type: 'close_tab', tab_id: request.params.tab_id },
        sentBy(request),
      ),
    ),
});
