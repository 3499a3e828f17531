import { z } from 'zod';
import { Empty } from '../common.js';
import { Health } from '../health.js';
import { ApiKeyList, CreatedApiKey } from '../keys.js';
import { SettingsAnswer, SettingsPatch } from '../settings.js';
import { binary, empty, Id, IdParams, json, route } from './route.js';

export const META_ROUTES = {
  'meta.health': route({
    name: 'meta.health',
    method: 'get',
    path: '/health',
    answer: json(Health),
    public: true,
    summary: 'Liveness',
    tag: 'meta',
  }),
  'meta.openapi': route({
    name: 'meta.openapi',
    method: 'get',
    path: '/openapi.json',
    answer: json(z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) })),
    public: true,
    summary: 'This document',
    tag: 'meta',
  }),
  'meta.screenshot': route({
    name: 'meta.screenshot',
    method: 'get',
    path: '/screenshots/{computer}/{file}',
    params: z.object({ computer: Id, file: Id }),
    answer: binary('image/png'),
    public: true,
    summary: 'A screenshot by its unguessable URL (no key needed: the URL is the secret)',
    tag: 'meta',
  }),
} as const;

const keysTag = 'keys';

export const KEY_ROUTES = {
  'keys.list': route({
    name: 'keys.list',
    method: 'get',
    path: '/keys',
    answer: json(ApiKeyList),
    summary:
      "The caller's organization's stored keys, newest first (keys given in the environment or the window's link are not listed)",
    tag: keysTag,
  }),
  'keys.create': route({
    name: 'keys.create',
    method: 'post',
    path: '/keys',
    body: Empty,
    answer: json(CreatedApiKey),
    summary:
      "A new key for the caller's organization; the key is shown only in this answer (at most limits.keys_per_org unrevoked keys, limits.key_creations_per_minute a minute)",
    tag: keysTag,
  }),
  'keys.revoke': route({
    name: 'keys.revoke',
    method: 'delete',
    path: '/keys/{id}',
    params: IdParams,
    answer: empty,
    summary: 'Revoke a key of the caller’s organization: it stops working at once',
    tag: keysTag,
  }),
} as const;

export const SETTINGS_ROUTES = {
  'settings.get': route({
    name: 'settings.get',
    method: 'get',
    path: '/settings',
    answer: json(SettingsAnswer),
    summary: 'The settings in effect, secrets masked, and the changed keys waiting for a restart',
    tag: 'settings',
  }),
  'settings.update': route({
    name: 'settings.update',
    method: 'patch',
    path: '/settings',
    body: SettingsPatch,
    answer: json(SettingsAnswer),
    summary:
      'Change settings: deep-merged into config.json (null removes a key), applied at once where possible',
    tag: 'settings',
  }),
} as const;
