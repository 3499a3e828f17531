import Conf from 'conf';

/** The stored settings: config.json in the data dir (the window edits it; conf's format). */
export function readStoredSettings(dataDir: string): Record<string, unknown> {
  const conf = new Conf<Record<string, unknown>>({
    cwd: dataDir,
    configName: 'config',
    clearInvalidConfig: false,
  });
  return conf.store;
}
