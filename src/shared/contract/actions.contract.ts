import {
  ACTION_ENDPOINTS,
  ActionResult,
  ACTION_ANSWERS,
  BatchBody,
  BatchResult,
  ExecuteBody,
  NewTabBody,
  type ActionEndpoint,
} from '../actions.js';
import { IdParams, json, route, TabParams } from './route.js';

type Endpoints = typeof ACTION_ENDPOINTS;

/** The route of one single-action endpoint: its body, and its answer typed by its action type. */
type ActionRoute<S extends ActionEndpoint> = {
  readonly name: `actions.${S}`;
  readonly method: 'post';
  readonly path: `/computers/{id}/${S}`;
  readonly params: typeof IdParams;
  readonly body: Endpoints[S]['body'];
  readonly answer: {
    readonly kind: 'json';
    readonly schema: (typeof ACTION_ANSWERS)[Endpoints[S]['type']];
  };
  readonly summary: string;
  readonly tag: 'actions';
};

function actionRoute<S extends ActionEndpoint>(segment: S): ActionRoute<S> {
  const { type, body } = ACTION_ENDPOINTS[segment];
  return {
    name: `actions.${segment}`,
    method: 'post',
    path: `/computers/{id}/${segment}`,
    params: IdParams,
    body: body as Endpoints[S]['body'],
    answer: { kind: 'json', schema: ACTION_ANSWERS[type as Endpoints[S]['type']] },
    summary: `Perform ${type} on the computer`,
    tag: 'actions',
  };
}

const SINGLE_ACTION_ROUTES = Object.fromEntries(
  (Object.keys(ACTION_ENDPOINTS) as ActionEndpoint[]).map((segment) => [
    `actions.${segment}`,
    actionRoute(segment),
  ]),
) as { readonly [S in ActionEndpoint as `actions.${S}`]: ActionRoute<S> };

export const ACTION_ROUTES = {
  ...SINGLE_ACTION_ROUTES,
  'actions.execute': route({
    name: 'actions.execute',
    method: 'post',
    path: '/computers/{id}/execute',
    params: IdParams,
    body: ExecuteBody,
    answer: json(ActionResult),
    summary: 'Perform any ComputerAction, given as {action} or bare',
    tag: 'actions',
  }),
  'actions.batch': route({
    name: 'actions.batch',
    method: 'post',
    path: '/computers/{id}/batch',
    params: IdParams,
    body: BatchBody,
    answer: json(BatchResult),
    summary: 'Run actions in order, stopping at the first failure',
    tag: 'actions',
  }),
} as const;

export const TAB_ROUTES = {
  'tabs.list': route({
    name: 'tabs.list',
    method: 'get',
    path: '/computers/{id}/tabs',
    params: IdParams,
    answer: json(ACTION_ANSWERS.list_tabs),
    summary: 'List tabs in opening order',
    tag: 'tabs',
  }),
  'tabs.create': route({
    name: 'tabs.create',
    method: 'post',
    path: '/computers/{id}/tabs',
    params: IdParams,
    body: NewTabBody,
    answer: json(ACTION_ANSWERS.new_tab),
    summary: 'Open a tab and make it main',
    tag: 'tabs',
  }),
  'tabs.switch': route({
    name: 'tabs.switch',
    method: 'post',
    path: '/computers/{id}/tabs/{tab_id}/switch',
    params: TabParams,
    answer: json(ACTION_ANSWERS.switch_tab),
    summary: 'Make a tab the main tab',
    tag: 'tabs',
  }),
  'tabs.close': route({
    name: 'tabs.close',
    method: 'delete',
    path: '/computers/{id}/tabs/{tab_id}',
    params: TabParams,
    answer: json(ACTION_ANSWERS.close_tab),
    summary: 'Close a tab',
    tag: 'tabs',
  }),
} as const;
