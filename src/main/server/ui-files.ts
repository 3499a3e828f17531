import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import express, { type Router } from 'express';
import { sendError } from './errors.js';

/**
 * Where the built window UI is: electron-vite writes it to out/renderer, next to the built main
 * code (out/main, or out/main/chunks once bundled); running the sources (tsx, from
 * src/main/server) it is the repository's out/renderer. Only a `renderer` folder inside `out`
 * counts: src/renderer holds the unbuilt page.
 */
export function findUiDir(): string | undefined {
  const here = import.meta.dirname;
  const candidates = [
    join(here, '..', 'renderer'),
    join(here, '..', '..', 'renderer'),
    join(here, '..', '..', '..', 'out', 'renderer'),
  ].filter((dir) => basename(dirname(dir)) === 'out');
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * The window's UI at /ui/, without a key: the page holds no secret (the key arrives in the URL
 * fragment or from the Electron preload) and every API call it makes needs one.
 */
export function uiFiles(dir: string | undefined): Router {
  const router = express.Router();
  router.get('/ui', (req, res, next) => {
    // Relative asset URLs need the trailing slash.
    if (req.originalUrl.split('?')[0] === '/ui') res.redirect(301, '/ui/');
    else next();
  });
  if (dir) {
    router.use('/ui', express.static(dir, { index: 'index.html', fallthrough: true }));
  }
  router.use('/ui', (_req, res) => {
    if (dir) return sendError(res, 'not_found', 'no such file of the UI');
    sendError(res, 'unavailable', 'the UI is not built; run `npm run build` and restart Benchtop');
  });
  return router;
}
