import { z } from 'zod';
import {
  Computer,
  ComputerStatus,
  CreateComputerBody,
  DownloadList,
  Environment,
  KeepaliveResult,
  ListComputersQuery,
} from '../computers.js';
import { binary, empty, Id, IdParams, json, route } from './route.js';

/** A download by its listed name: only a listed name is ever served. */
const DownloadParams = z.object({ id: Id, name: z.string().min(1).max(255) });

const tag = 'computers';

export const COMPUTER_ROUTES = {
  'computers.create': route({
    name: 'computers.create',
    method: 'post',
    path: '/computers',
    body: CreateComputerBody,
    answer: json(Computer),
    summary: 'Create a computer',
    tag,
  }),
  'computers.list': route({
    name: 'computers.list',
    method: 'get',
    path: '/computers',
    query: ListComputersQuery,
    answer: json(z.union([z.array(Computer), z.array(Environment)])),
    summary:
      "List the organization's running computers, or its saved environments with type=persistent",
    tag,
  }),
  'computers.get': route({
    name: 'computers.get',
    method: 'get',
    path: '/computers/{id}',
    params: IdParams,
    answer: json(Computer),
    summary: 'Retrieve a computer (also after it ended)',
    tag,
  }),
  'computers.delete': route({
    name: 'computers.delete',
    method: 'delete',
    path: '/computers/{id}',
    params: IdParams,
    answer: empty,
    summary: 'End a computer (idempotent)',
    tag,
  }),
  'computers.status': route({
    name: 'computers.status',
    method: 'get',
    path: '/computers/{id}/status',
    params: IdParams,
    answer: json(ComputerStatus),
    summary: 'Status and lifetimes of a computer',
    tag,
  }),
  'computers.keepalive': route({
    name: 'computers.keepalive',
    method: 'post',
    path: '/computers/{id}/keepalive',
    params: IdParams,
    answer: json(KeepaliveResult),
    summary: 'Count as activity',
    tag,
  }),
  'computers.downloads': route({
    name: 'computers.downloads',
    method: 'get',
    path: '/computers/{id}/downloads',
    params: IdParams,
    answer: json(DownloadList),
    summary:
      "The files a computer's browser downloaded, oldest first (Benchtop extension; after a browser computer ended, from its recording while that is kept)",
    tag,
  }),
  'computers.download': route({
    name: 'computers.download',
    method: 'get',
    path: '/computers/{id}/downloads/{name}',
    params: DownloadParams,
    answer: binary('application/octet-stream'),
    summary: 'One downloaded file, as an attachment (Benchtop extension)',
    tag,
  }),
  'environments.delete': route({
    name: 'environments.delete',
    method: 'delete',
    path: '/environments/{id}',
    params: IdParams,
    answer: empty,
    summary:
      'Delete a saved environment (Benchtop extension; GET /computers?type=persistent lists them)',
    tag: 'environments',
  }),
} as const;
