import { join } from 'node:path';
import Conf, { type Options } from 'conf';
import { ConfigError, isPlainObject } from '../config.js';

/** conf would read a file holding `"x"` or `[1, 2]` as the keys 0, 1…: refused instead. */
class NotAnObject extends Error {
  constructor(readonly holds: string) {
    super(`holds ${holds}, not a JSON object`);
  }
}

function parseObject(text: string): Record<string, unknown> {
  // An empty file (`touch config.json`) holds nothing to lose: read as no settings or keys.
  if (text.trim() === '') return {};
  const value: unknown = JSON.parse(text);
  if (!isPlainObject(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new NotAnObject(what);
  }
  return value;
}

/**
 * A JSON file of the data dir kept with conf (settings, keys), which a person may edit by hand.
 * One that is not a JSON object stops what reads it with a ConfigError naming the file; it is
 * never replaced (conf's clearInvalidConfig would empty it: the settings or keys it held, gone).
 */
export function openConfFile<T extends Record<string, unknown>>(
  options: Omit<Options<T>, 'clearInvalidConfig' | 'deserialize'> & {
    cwd: string;
    configName: string;
  },
): Conf<T> {
  try {
    return new Conf<T>({
      ...options,
      clearInvalidConfig: false,
      deserialize: parseObject as (text: string) => T,
    });
  } catch (error) {
    if (!(error instanceof SyntaxError || error instanceof NotAnObject)) throw error;
    const file = join(options.cwd, `${options.configName}.json`);
    const wrong =
      error instanceof NotAnObject ? error.message : `is not valid JSON (${error.message})`;
    throw new ConfigError(
      `${file} ${wrong}; fix it, or move it away to start without what it holds`,
      { cause: error },
    );
  }
}
