import { z } from 'zod';
import { SecretCreateBody, SecretInfo, SecretParams } from '../secrets.js';
import { empty, json, route } from './route.js';

const tag = 'secrets';

/** docs/API.md §15: the vault. A value goes in once and is only ever typed, never read back. */
export const SECRET_ROUTES = {
  'secrets.create': route({
    name: 'secrets.create',
    method: 'post',
    path: '/secrets',
    body: SecretCreateBody,
    answer: json(SecretInfo),
    summary:
      'Store a secret (encrypted) for {{secret:NAME}} in typed text; a new value replaces the old',
    tag,
  }),
  'secrets.list': route({
    name: 'secrets.list',
    method: 'get',
    path: '/secrets',
    answer: json(z.array(SecretInfo)),
    summary: "The organization's secrets: names only",
    tag,
  }),
  'secrets.delete': route({
    name: 'secrets.delete',
    method: 'delete',
    path: '/secrets/{name}',
    params: SecretParams,
    answer: empty,
    summary: 'Forget a secret',
    tag,
  }),
} as const;
