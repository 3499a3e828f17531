import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { buildOutputs, isBuildStale } from './start-plan.js';

const requireHere = createRequire(import.meta.url);

/**
 * The executable the `electron` package points at, if it was downloaded. Installed with
 * ELECTRON_SKIP_BINARY_DOWNLOAD, the package throws when asked for its path.
 */
export function findElectron(
  load: () => unknown = () => requireHere('electron'),
): string | undefined {
  try {
    const binary = load();
    return typeof binary === 'string' && existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, mtime(join(entry.parentPath, entry.name)) ?? 0);
  }
  return newest;
}

/** Whether out/ is missing or older than src/ (or the build config). */
export function needsBuild(appDir: string): boolean {
  const sources = Math.max(
    newestIn(join(appDir, 'src')),
    mtime(join(appDir, 'electron.vite.config.ts')) ?? 0,
  );
  return isBuildStale(buildOutputs(appDir).map(mtime), sources);
}

/** electron-vite's command-line entry, or undefined in an install without dev dependencies. */
export function electronViteCli(): string | undefined {
  try {
    return join(requireHere.resolve('electron-vite/package.json'), '..', 'bin', 'electron-vite.js');
  } catch {
    return undefined;
  }
}
