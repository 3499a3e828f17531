import { defaultDataDir, resolveSettings, settingOverrides } from './core/config.js';
import { createCore, type Core } from './core/create-core.js';
import { preparePrivateDataDir } from './core/store/private-files.js';
import { readStoredSettings } from './core/store/settings-store.js';
import { startServer, type RunningServer } from './server/start-server.js';

export type StartOptions = {
  dataDir?: string;
  /** Command-line flags, shaped like the settings file. */
  flags?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Extra key accepted for `local` besides BENCHTOP_API_KEY (the window's own key). */
  windowKey?: string;
  log?: (message: string) => void;
};

export type Benchtop = {
  core: Core;
  server: RunningServer;
  /** A key created on this start (first start only), to be shown once. */
  firstKey?: string;
  close(): Promise<void>;
};

/** The composition both roots share: settings → core → server. Throws ConfigError on bad settings. */
export async function startBenchtop(options: StartOptions = {}): Promise<Benchtop> {
  const env = options.env ?? process.env;
  const dataDir = options.dataDir ?? defaultDataDir(env);
  preparePrivateDataDir(dataDir);
  const settings = resolveSettings({
    stored: readStoredSettings(dataDir),
    env,
    flags: options.flags,
  });
  const core = await createCore({
    settings,
    dataDir,
    trustedKey: env.BENCHTOP_API_KEY,
    watchKeys: true,
    overrides: settingOverrides({ env, flags: options.flags }),
  });
  if (options.windowKey) core.keys.trustKey(options.windowKey, 'local');
  const firstKey =
    !env.BENCHTOP_API_KEY && !core.keys.hasStoredKeys() ? core.keys.create('local').key : undefined;
  let server: RunningServer;
  try {
    server = await startServer(core, { log: options.log });
  } catch (error) {
    await core.close();
    throw error;
  }
  return {
    core,
    server,
    firstKey,
    async close() {
      await server.close();
      await core.close();
    },
  };
}
