import { join } from 'node:path';
import { defaultDataDir, resolveSettings, settingOverrides } from './core/config.js';
import type { WorkerEntry } from './core/computers/desktop/worker-client.js';
import { createCore, type Core } from './core/create-core.js';
import { appCipher, type SafeStorage } from './core/secrets/secret-cipher.js';
import { beginRun } from './core/runtime/orphan-sweep.js';
import { preparePrivateDataDir } from './core/store/private-files.js';
import { readStoredSettings } from './core/store/settings-store.js';
import { startServer, type RunningServer } from './server/start-server.js';

/** Where the app's own files are: its built window UI and the desktop worker's module. */
export type AppPaths = { uiDir: string; workerEntry: WorkerEntry };

/**
 * The paths of the built app, from the folder of its entry scripts (out/main, which holds
 * cli.js, index.js and desktop-worker.js; the UI is built to out/renderer).
 */
export function builtAppPaths(mainDir: string): AppPaths {
  return {
    uiDir: join(mainDir, '..', 'renderer'),
    workerEntry: { path: join(mainDir, 'desktop-worker.js') },
  };
}

export type StartOptions = {
  /** Resolved once by the root that starts Benchtop (see builtAppPaths). */
  paths: AppPaths;
  dataDir?: string;
  /** Command-line flags, shaped like the settings file. */
  flags?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Extra key accepted for `local` besides BENCHTOP_API_KEY (the window's own key). */
  windowKey?: string;
  log?: (message: string) => void;
  /** The desktop app's OS keychain (Electron's safeStorage); headless, a key file is used. */
  safeStorage?: SafeStorage;
  /**
   * Creates organization local's first key when none is stored, for the caller to show once
   * (default true). False for a host that cannot show it (MCP over stdio: its client keeps the
   * output in logs): the next start that can show one makes it.
   */
  makeFirstKey?: boolean;
};

export type Benchtop = {
  core: Core;
  server: RunningServer;
  /** A key created on this start (first start only), to be shown once. */
  firstKey?: string;
  /** Ends the server, then every computer; `onStep` hears each part as its close begins. */
  close(onStep?: (part: string) => void): Promise<void>;
};

/**
 * The composition both roots share: settings → core → server. Throws ConfigError on bad
 * settings. What a run on the same data dir left running when it was killed is ended first.
 */
export async function startBenchtop(options: StartOptions): Promise<Benchtop> {
  const env = options.env ?? process.env;
  const dataDir = options.dataDir ?? defaultDataDir(env);
  preparePrivateDataDir(dataDir);
  const settings = resolveSettings({
    stored: readStoredSettings(dataDir),
    env,
    flags: options.flags,
  });
  const run = await beginRun(dataDir);
  if (run.orphansEnded > 0) {
    (options.log ?? console.log)(
      `ended ${run.orphansEnded} processes that a killed earlier run on this data dir left`,
    );
  }
  // What goes wrong in the background (a recording that could not be finished, an item the
  // notifications webhook refused) is said on stderr, where a person running Benchtop sees it.
  const log = options.log ?? ((message: string) => console.error(`benchtop: ${message}`));
  let core: Core;
  try {
    core = await createCore({
      settings,
      dataDir,
      trustedKey: env.BENCHTOP_API_KEY,
      watchKeys: true,
      overrides: settingOverrides({ env, flags: options.flags }),
      workerEntry: options.paths.workerEntry,
      log,
      secretCipher: options.safeStorage && appCipher(options.safeStorage, dataDir),
    });
  } catch (error) {
    run.end();
    throw error;
  }
  if (options.windowKey) core.keys.trustKey(options.windowKey, 'local');
  let server: RunningServer;
  try {
    server = await startServer(core, { log, uiDir: options.paths.uiDir });
  } catch (error) {
    await core.close();
    run.end();
    throw error;
  }
  // Made once the server listens: a start that fails before (its port taken) would store a key
  // nobody was shown, and the next start, finding a stored key, would print none.
  const firstKey =
    options.makeFirstKey !== false && !env.BENCHTOP_API_KEY && !core.keys.hasStoredKeys()
      ? core.keys.create('local').key
      : undefined;
  return {
    core,
    server,
    firstKey,
    async close(onStep) {
      onStep?.('the server');
      await server.close();
      await core.close(onStep);
      run.end();
    },
  };
}
