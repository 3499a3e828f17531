import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Router } from 'express';
import { sendError } from './errors.js';

/**
 * The window's UI at /ui/ (the built renderer, out/renderer), without a key: the page holds no
 * secret (the key arrives in the URL fragment or from the Electron preload) and every API call
 * it makes needs one.
 */
export function uiFiles(uiDir: string | undefined): Router {
  // A folder without the page is a UI that was not built (yet).
  const dir = uiDir && existsSync(join(uiDir, 'index.html')) ? uiDir : undefined;
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
