import { join } from 'node:path';

/** What `npm start` looks at before choosing between the window and the headless server. */
export type StartFacts = {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  /** Electron's executable when the `electron` package has one installed, else undefined. */
  electronBinary: string | undefined;
  /** The user id on POSIX systems (undefined on Windows). */
  uid: number | undefined;
  /** `--headless` on the command line (what `npm run serve` passes). */
  headlessRequested: boolean;
  /** The repository (the app directory Electron is started on). */
  appDir: string;
};

export type StartPlan =
  | {
      mode: 'electron';
      binary: string;
      args: string[];
      env: Record<string, string | undefined>;
      notes: string[];
    }
  | { mode: 'headless'; reason?: string };

/** Whether a window could appear: Linux and the BSDs need an X or Wayland server to talk to. */
export function hasDisplay(platform: NodeJS.Platform, env: StartFacts['env']): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * The window where Electron can run, the headless server everywhere else. The headless reason is
 * printed so a person who expected a window learns what is missing.
 */
export function planStart(facts: StartFacts): StartPlan {
  if (facts.headlessRequested) return { mode: 'headless' };
  if (!facts.electronBinary) {
    return {
      mode: 'headless',
      reason:
        "Electron's binary is not installed (`node node_modules/electron/install.js` fetches it)",
    };
  }
  if (!hasDisplay(facts.platform, facts.env)) {
    return {
      mode: 'headless',
      reason: 'there is no display (DISPLAY and WAYLAND_DISPLAY are unset)',
    };
  }
  const args = [facts.appDir];
  const notes: string[] = [];
  if (facts.platform === 'linux' && facts.uid === 0) {
    // Chromium refuses to start as root with its sandbox; the window only ever shows our server.
    args.push('--no-sandbox');
    notes.push("running as root: Chromium's process sandbox is off for the window");
  }
  // Set in the environment, it would make Electron a plain Node and the app would never open.
  const { ELECTRON_RUN_AS_NODE: _runAsNode, ...env } = facts.env;
  return { mode: 'electron', binary: facts.electronBinary, args, env, notes };
}

/**
 * The build's entry files: the window needs the main, preload and renderer; the headless server
 * its CLI, the desktop worker and the renderer (for /ui/); `npm start` the launcher.
 */
export function buildOutputs(appDir: string): string[] {
  return [
    join(appDir, 'out', 'main', 'index.js'),
    join(appDir, 'out', 'main', 'cli.js'),
    join(appDir, 'out', 'main', 'desktop-worker.js'),
    join(appDir, 'out', 'main', 'launcher.js'),
    join(appDir, 'out', 'preload', 'index.cjs'),
    join(appDir, 'out', 'renderer', 'index.html'),
  ];
}

/**
 * A build is needed when an output is missing or older than the newest source file (an edit, a
 * pull): a stale window would silently run yesterday's code.
 */
export function isBuildStale(
  outputTimes: readonly (number | undefined)[],
  newestSourceTime: number,
): boolean {
  if (outputTimes.some((time) => time === undefined)) return true;
  return Math.min(...(outputTimes as number[])) < newestSourceTime;
}
