import { join } from 'node:path';
import Conf, { type Options } from 'conf';
import { ConfigError } from '../config.js';

/**
 * A JSON file of the data dir kept with conf (settings, keys), which a person may edit by hand.
 * One that is not JSON stops what reads it with a ConfigError naming the file; it is never
 * replaced (conf's clearInvalidConfig would empty it: the settings or keys it held, gone).
 */
export function openConfFile<T extends Record<string, unknown>>(
  options: Omit<Options<T>, 'clearInvalidConfig'> & { cwd: string; configName: string },
): Conf<T> {
  try {
    return new Conf<T>({ ...options, clearInvalidConfig: false });
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const file = join(options.cwd, `${options.configName}.json`);
    throw new ConfigError(
      `${file} is not valid JSON (${error.message}); fix it, or move it away to start without what it holds`,
      { cause: error },
    );
  }
}
