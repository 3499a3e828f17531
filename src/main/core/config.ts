import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { Settings } from '../../shared/settings.js';

export {
  ModelConfig,
  PROVIDER_KINDS,
  Settings,
  type ProviderKind,
  type SettingsInput,
} from '../../shared/settings.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Layer = { source: string; values: Record<string, unknown> };
type Env = Record<string, string | undefined>;

/** BENCHTOP_* variables that are not settings. */
const NON_SETTING_VARIABLES = new Set([
  'BENCHTOP_DATA_DIR',
  'BENCHTOP_CONFIG',
  'BENCHTOP_API_KEY',
  'BENCHTOP_CHROMIUM',
  // The crash tests' fault point in saves (core/store/environment-store.ts).
  'BENCHTOP_TEST_STOP_SAVE',
]);
const SHORTHAND_VARIABLES: Record<string, string> = {
  BENCHTOP_PORT: 'server.port',
  BENCHTOP_HOST: 'server.host',
};

/** Whether server.host listens on every address of the machine (0.0.0.0 or ::). */
export function listensEverywhere(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

export function defaultDataDir(env: Env = process.env): string {
  if (env.BENCHTOP_DATA_DIR) return env.BENCHTOP_DATA_DIR;
  const home = homedir();
  if (process.platform === 'darwin')
    return join(home, 'Library', 'Application Support', 'Benchtop');
  if (process.platform === 'win32')
    return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Benchtop');
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'benchtop');
}

/**
 * Merges the layers (last wins) and validates once. Every problem names its key and where it
 * came from, so a person can fix it.
 */
export function resolveSettings(options: {
  stored: Record<string, unknown>;
  env?: Env;
  flags?: Record<string, unknown>;
}): Settings {
  const layers: Layer[] = [
    { source: 'the settings store', values: options.stored },
    ...overrideLayers(options.env ?? process.env, options.flags),
  ];

  let merged: Record<string, unknown> = {};
  for (const layer of layers) {
    const result = Settings.safeParse(layer.values);
    if (!result.success) throw configProblem(result.error.issues[0]!, layer.source);
    merged = deepMerge(merged, layer.values);
  }
  const result = Settings.safeParse(merged);
  if (!result.success) throw configProblem(result.error.issues[0]!, 'the merged settings');
  return result.data;
}

/** BENCHTOP_CONFIG, BENCHTOP_* variables and flags: what wins over the stored settings at start. */
function overrideLayers(env: Env, flags?: Record<string, unknown>): Layer[] {
  const layers: Layer[] = [];
  if (env.BENCHTOP_CONFIG) layers.push(readConfigFile(env.BENCHTOP_CONFIG));
  layers.push(envLayer(env));
  if (flags) layers.push({ source: 'command-line flags', values: flags });
  return layers;
}

/** The override layers merged, for the settings service to keep them above config.json. */
export function settingOverrides(options: {
  env?: Env;
  flags?: Record<string, unknown>;
}): Record<string, unknown> {
  return overrideLayers(options.env ?? process.env, options.flags).reduce(
    (merged, layer) => deepMerge(merged, layer.values),
    {},
  );
}

function configProblem(issue: z.core.$ZodIssue, source: string): ConfigError {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => [...issue.path, key].join('.'));
    return new ConfigError(`unknown setting ${keys.join(', ')} in ${source}`);
  }
  return new ConfigError(`setting ${issue.path.join('.')} in ${source}: ${issue.message}`);
}

function readConfigFile(path: string): Layer {
  const source = `BENCHTOP_CONFIG file ${path}`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read ${source}: ${(error as Error).message}`);
  }
  return { source, values: parseJsonObject(text, source) };
}

/**
 * What a JSON file a person edits holds: an object of settings (or keys); an empty file holds
 * nothing. Anything else is a ConfigError naming the file (`name`), what is wrong, and `fix`.
 */
export function parseJsonObject(text: string, name: string, fix?: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const refuse = (wrong: string, cause?: unknown) =>
    new ConfigError(`${name} ${wrong}${fix ? `; ${fix}` : ''}`, { cause });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse(`is not valid JSON (${(error as Error).message})`, error);
  }
  if (!isPlainObject(value)) {
    const holds = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw refuse(`holds ${holds}, not a JSON object`);
  }
  return value;
}

function envLayer(env: Env): Layer {
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('BENCHTOP_') || NON_SETTING_VARIABLES.has(name) || raw === undefined)
      continue;
    const path = SHORTHAND_VARIABLES[name] ?? settingPathOf(name);
    if (!path) {
      throw new ConfigError(
        `unknown variable ${name}: settings variables look like BENCHTOP_<SECTION>_<KEY>, e.g. BENCHTOP_BROWSER_WARM_POOL`,
      );
    }
    setPath(values, path, parseValue(raw));
  }
  return { source: 'BENCHTOP_* variables', values };
}

/** BENCHTOP_BROWSER_WARM_POOL → browser.warm_pool, when that section and key exist. */
function settingPathOf(variable: string): string | undefined {
  const rest = variable.slice('BENCHTOP_'.length).toLowerCase();
  for (const [section, schema] of Object.entries(Settings.shape)) {
    if (!rest.startsWith(`${section}_`)) continue;
    const key = rest.slice(section.length + 1);
    const inner = (schema as unknown as { def: { innerType: z.ZodObject } }).def.innerType;
    // A section that is a record (organizations) has no fixed keys to name in a variable.
    if (inner.shape && key in inner.shape) return `${section}.${key}`;
  }
  return undefined;
}

function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1)!] = value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key], value) : value;
  }
  return out;
}

/** A URL with its password as "***", for answers and messages (a backend's, a proxy's). */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

/** The proxy URL without its password, for results and logs. */
export function redactProxy(proxyUrl: string): string {
  return proxyUrl ? redactedUrl(proxyUrl).replace(/\/$/, '') : '';
}
