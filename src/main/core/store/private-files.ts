import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';

/**
 * Modes of what Benchtop writes under its data dir: keys, provider keys, saved cookies, what
 * organizations asked their models and screenshots of their computers are readable by this user
 * only. Set explicitly where Benchtop writes rather than through a process umask, which would
 * also narrow what the commands people run on their computers create anywhere else.
 */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/**
 * Creates the data dir readable by this user only, or narrows one that exists: its content may
 * have been written by an earlier version with wider modes, and the folder's own mode is what
 * keeps others out of all of it. The files Benchtop keeps at its top are narrowed as well.
 */
export function preparePrivateDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR });
    narrow(dataDir, PRIVATE_DIR);
    for (const name of ['keys.json', 'config.json', 'ip-blocks.json']) {
      narrow(join(dataDir, name), PRIVATE_FILE);
    }
  } catch (error) {
    // Not writable by this user, or another user's: nothing can start on it.
    throw new ConfigError(
      `cannot use the data dir ${dataDir} (${(error as Error).message}); set BENCHTOP_DATA_DIR to a folder this user can write`,
      { cause: error },
    );
  }
}

/** Creates file empty with PRIVATE_FILE unless it exists, and narrows the mode of what exists. */
export function createPrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  narrow(file, PRIVATE_FILE);
}

/** Takes group and other permissions away from path, if it exists and has any. */
export function narrow(path: string, mode: number): void {
  let current: number;
  try {
    current = statSync(path).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (current & 0o077) chmodSync(path, mode);
}
