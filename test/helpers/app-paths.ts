import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppPaths } from '../../src/main/start-benchtop.js';

const repo = join(import.meta.dirname, '..', '..');

/**
 * The app's paths for tests that run Benchtop from its sources: the desktop worker's TypeScript
 * through tsx (so a change to it needs no build), and the built UI (`npm run build`).
 */
export function sourceAppPaths(): AppPaths {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
  return {
    uiDir: join(repo, 'out', 'renderer'),
    workerEntry: {
      path: join(repo, 'src', 'main', 'core', 'computers', 'desktop', 'desktop-worker.ts'),
      execArgv: ['--import', tsx],
    },
  };
}
