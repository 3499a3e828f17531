import { UsageList, UsageQuery } from '../usage.js';
import { json, route } from './route.js';

/** docs/API.md §15: the ledger of model calls. */
export const USAGE_ROUTES = {
  'usage.list': route({
    name: 'usage.list',
    method: 'get',
    path: '/v1/usage',
    query: UsageQuery,
    answer: json(UsageList),
    summary:
      "The organization's model calls, oldest first: tokens, cached tokens, cost, latency and images of each; filtered by task, response or time",
    tag: 'usage',
  }),
} as const;
