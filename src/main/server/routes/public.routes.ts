import { Health } from '../../../shared/health.js';
import type { Core } from '../../core/create-core.js';
import { notFound } from '../../core/errors.js';
import { buildOpenApi } from '../openapi.js';
import type { Routes } from '../route-spec.js';

export const VERSION = '0.1.0';

/** Routes that need no key: health, the API description, and screenshot URLs (their token is the secret). */
export function publicRoutes(routes: Routes, core: Core): void {
  routes.add(
    {
      method: 'get',
      path: '/health',
      tag: 'meta',
      summary: 'Liveness',
      response: Health,
      public: true,
    },
    () => ({ status: 'ok', version: VERSION }),
  );

  routes.add(
    { method: 'get', path: '/openapi.json', tag: 'meta', summary: 'This document', public: true },
    () => buildOpenApi(routes.registered, { version: VERSION, baseUrl: core.baseUrl }),
  );

  routes.add(
    {
      method: 'get',
      path: '/screenshots/:computer/:file',
      tag: 'meta',
      summary: 'A screenshot by its unguessable URL',
      produces: 'image/png',
      public: true,
    },
    async ({ params, res }) => {
      const png = await core.screenshots.read(params.computer!, params.file!);
      if (!png)
        throw notFound(
          'no such screenshot; screenshots expire ten minutes after their computer ends',
        );
      res.setHeader('Content-Type', 'image/png');
      res.setHeader('Cache-Control', 'private, max-age=600');
      res.end(png);
      return undefined;
    },
  );
}
