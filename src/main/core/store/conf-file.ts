import { join } from 'node:path';
import Conf, { type Options } from 'conf';
import { parseJsonObject } from '../config.js';

/**
 * A JSON file of the data dir kept with conf (settings, keys), which a person may edit by hand.
 * One that is not a JSON object stops what reads it with a ConfigError naming the file (conf
 * would read `"x"` as the key 0); it is never replaced (conf's clearInvalidConfig would empty
 * it: the settings or keys it held, gone).
 */
export function openConfFile<T extends Record<string, unknown>>(
  options: Omit<Options<T>, 'clearInvalidConfig' | 'deserialize'> & {
    cwd: string;
    configName: string;
  },
): Conf<T> {
  const file = join(options.cwd, `${options.configName}.json`);
  return new Conf<T>({
    ...options,
    clearInvalidConfig: false,
    deserialize: (text) =>
      parseJsonObject(text, file, 'fix it, or move it away to start without what it holds') as T,
  });
}
