import type Conf from 'conf';
import { openConfFile } from './conf-file.js';

function settingsFile(dataDir: string): Conf<Record<string, unknown>> {
  return openConfFile<Record<string, unknown>>({
    cwd: dataDir,
    configName: 'config',
    // Provider keys the window stores live here: readable by this user only.
    configFileMode: 0o600,
  });
}

/** The stored settings: config.json in the data dir (the window edits it; conf's format). */
export function readStoredSettings(dataDir: string): Record<string, unknown> {
  return settingsFile(dataDir).store;
}

/** Replaces config.json as a whole, atomically (conf writes a temp file and renames it). */
export function writeStoredSettings(dataDir: string, values: Record<string, unknown>): void {
  settingsFile(dataDir).store = values;
}
