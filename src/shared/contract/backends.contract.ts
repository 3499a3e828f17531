import { BackendList } from '../backends.js';
import { json, route } from './route.js';

/** docs/API.md §17: where browser computers run. */
export const BACKEND_ROUTES = {
  'backends.list': route({
    name: 'backends.list',
    method: 'get',
    path: '/backends',
    answer: json(BackendList),
    summary:
      'The browser backends in settings order: each one’s type, url, status (up or down, from its health checks), capacity and running computers',
    tag: 'backends',
  }),
} as const;
