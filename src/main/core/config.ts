import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

export const PROVIDER_KINDS = [
  'scripted',
  'openai',
  'anthropic',
  'lightcone',
  'openai-compatible',
] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** One model name's backend. Keys come from `api_key` (set by the window) or `api_key_env`. */
const ModelConfig = z.strictObject({
  provider: z.enum(PROVIDER_KINDS),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key_env: z.string().min(1).optional(),
  api_key: z.string().min(1).optional(),
  /** The upstream model name, when it differs from the Benchtop model name. */
  model: z.string().min(1).optional(),
  script: z.string().min(1).optional(),
  timeout_ms: z.number().int().positive().optional(),
});
export type ModelConfig = z.infer<typeof ModelConfig>;

/** The one settings schema: the store, BENCHTOP_CONFIG, BENCHTOP_* variables and flags all fill it. */
export const Settings = z.strictObject({
  server: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.number().int().min(0).max(65_535).default(4422),
      allowed_hosts: z.array(z.string()).default(['localhost', '127.0.0.1']),
      cors_origins: z.array(z.string()).default([]),
    })
    .prefault({}),
  browser: z
    .strictObject({
      executable_path: z.string().nullable().default(null),
      headless: z.boolean().default(true),
      warm_pool: z.number().int().min(0).max(20).default(2),
    })
    .prefault({}),
  desktop: z.strictObject({ host_mode: z.boolean().default(false) }).prefault({}),
  exec: z.strictObject({ enabled: z.boolean().default(true) }).prefault({}),
  limits: z
    .strictObject({
      requests_per_second: z.number().positive().default(100),
      burst: z.number().int().positive().default(200),
      browsers_per_org: z.number().int().min(0).default(10),
      desktops_per_org: z.number().int().min(0).default(2),
      auth_failures_before_block: z.number().int().positive().default(10),
      max_tabs: z.number().int().min(1).max(500).default(20),
    })
    .prefault({}),
  proxy: z.strictObject({ advanced_proxy_url: z.string().nullable().default(null) }).prefault({}),
  models: z
    .strictObject({
      default: z.string().default('tzafon.northstar-cua-fast'),
      providers: z.record(z.string(), ModelConfig).default({
        'tzafon.northstar-cua-fast': {
          provider: 'lightcone',
          base_url: 'https://api.tzafon.ai',
          api_key_env: 'LIGHTCONE_CLOUD_API_KEY',
        },
      }),
    })
    .prefault({}),
});
export type Settings = z.infer<typeof Settings>;
export type SettingsInput = z.input<typeof Settings>;

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
]);
const SHORTHAND_VARIABLES: Record<string, string> = {
  BENCHTOP_PORT: 'server.port',
  BENCHTOP_HOST: 'server.host',
};

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
  const env = options.env ?? process.env;
  const layers: Layer[] = [{ source: 'the settings store', values: options.stored }];
  if (env.BENCHTOP_CONFIG) layers.push(readConfigFile(env.BENCHTOP_CONFIG));
  layers.push(envLayer(env));
  if (options.flags) layers.push({ source: 'command-line flags', values: options.flags });

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
  try {
    const values: unknown = JSON.parse(text);
    if (!isPlainObject(values)) throw new Error('the top level must be an object');
    return { source, values };
  } catch (error) {
    throw new ConfigError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
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
    if (key in inner.shape) return `${section}.${key}`;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
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
