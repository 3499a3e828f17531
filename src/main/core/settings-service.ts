import { accessSync, constants } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { z } from 'zod';
import { MASKED_SECRET, type SettingsAnswer } from '../../shared/settings.js';
import {
  ConfigError,
  deepMerge,
  isPlainObject,
  redactedUrl,
  redactProxy,
  Settings,
} from './config.js';
import { invalidRequest, unavailable } from './errors.js';
import type { SettingsSource } from './runtime/settings-source.js';
import { readStoredSettings, writeStoredSettings } from './store/settings-store.js';

type Values = Record<string, unknown>;

/**
 * Read once at start: the listener, the one shared Chromium's launch options and warm pool, and
 * the desktops' warm pool. Every other key is read where it is used, from the snapshot current at
 * that moment, or followed by what holds it (the browser backends).
 */
export const RESTART_KEYS: readonly string[] = [
  'server.host',
  'server.port',
  'browser.executable_path',
  'browser.headless',
  'browser.warm_pool',
  'desktop.warm_pool',
];

const DEFAULTS = Settings.parse({});

export type SettingsServiceOptions = {
  /** The settings core runs with: a change replaces its snapshot (restart keys keep theirs). */
  source: SettingsSource;
  dataDir: string;
  /** BENCHTOP_CONFIG, BENCHTOP_* variables and flags merged: they stay above config.json. */
  overrides?: Values;
};

/** The settings screen's view of config.json: read masked, patch, store, apply what can be. */
export class SettingsService {
  private readonly source: SettingsSource;
  private readonly dataDir: string;
  private readonly overrides: Values;
  private readonly storedAtStart: Values;
  private stored: Values;

  constructor(options: SettingsServiceOptions) {
    this.source = options.source;
    this.dataDir = options.dataDir;
    this.overrides = options.overrides ?? {};
    this.stored = readStoredSettings(this.dataDir);
    this.storedAtStart = this.stored;
  }

  get(): SettingsAnswer {
    return {
      settings: masked(this.effective(this.stored)),
      restart_required: RESTART_KEYS.filter(
        (key) =>
          !isDeepStrictEqual(storedValue(this.stored, key), storedValue(this.storedAtStart, key)),
      ),
      overridden: settingKeys(this.overrides),
    };
  }

  /**
   * Deep-merges a patch into config.json (`null` removes a key; masked secrets keep the stored
   * ones), stores it atomically and applies every key that can change while running. An invalid
   * result stores nothing.
   */
  update(patch: unknown): SettingsAnswer {
    if (!isPlainObject(patch)) throw invalidRequest('the body must be a JSON object of settings');
    const stored = storedNow(this.dataDir);
    const next = mergePatch(withDefaultProviders(stored, patch), this.keepSecrets(patch));
    const effective = checked(next, () => this.effective(next));
    checkScripts(effective, this.source.current());
    writeStoredSettings(this.dataDir, next);
    this.stored = next;
    this.apply(effective);
    return this.get();
  }

  private effective(stored: Values): Settings {
    return Settings.parse(deepMerge(stored, this.overrides));
  }

  /** Replaces the running snapshot by `next`, except restart keys, which keep their values. */
  private apply(next: Settings): void {
    const current = this.source.current() as unknown as Record<string, Values>;
    const applied = structuredClone(next) as unknown as Record<string, Values>;
    for (const key of RESTART_KEYS) {
      const [section, name] = key.split('.') as [string, string];
      applied[section]![name] = current[section]![name];
    }
    this.source.replace(applied as unknown as Settings);
  }

  /** The patch without secrets sent back masked, so the stored ones stay. */
  private keepSecrets(patch: Values): Values {
    const out = structuredClone(patch);
    const providers = (out.models as Values | undefined)?.providers;
    if (isPlainObject(providers)) {
      for (const entry of Object.values(providers)) {
        if (isPlainObject(entry) && entry.api_key === MASKED_SECRET) delete entry.api_key;
      }
    }
    if (isPlainObject(out.notifications) && out.notifications.webhook_secret === MASKED_SECRET) {
      delete out.notifications.webhook_secret;
    }
    // Backends are live too: a URL sent back as GET showed it masked keeps the running one's
    // password.
    const backends = isPlainObject(out.browser) ? out.browser.backends : undefined;
    if (Array.isArray(backends)) {
      const running = this.source.current().browser.backends;
      for (const entry of backends) {
        if (!isPlainObject(entry) || typeof entry.url !== 'string') continue;
        const same = running.find(
          (backend) => backend.url && maskUrlPassword(backend.url) === entry.url,
        );
        if (same) entry.url = same.url;
      }
    }
    // proxy is a live key: the running value is the one GET showed masked.
    const url = this.source.current().proxy.advanced_proxy_url;
    if (isPlainObject(out.proxy) && url && out.proxy.advanced_proxy_url === maskProxy(url)) {
      delete out.proxy.advanced_proxy_url;
    }
    return out;
  }
}

/** The stored settings with the patch applied: objects merge, `null` removes. */
function mergePatch(base: Values, patch: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value))
      out[key] = mergePatch(isPlainObject(out[key]) ? out[key] : {}, value);
    else out[key] = value;
  }
  return out;
}

/**
 * Adding a provider to a file that names none must not drop the default one the list showed:
 * the defaults are written out first.
 */
function withDefaultProviders(stored: Values, patch: Values): Values {
  const touches = isPlainObject(patch.models) && patch.models.providers !== undefined;
  const models = isPlainObject(stored.models) ? stored.models : {};
  if (!touches || models.providers !== undefined) return stored;
  return { ...stored, models: { ...models, providers: DEFAULTS.models.providers } };
}

/** Validates the file to be and what it makes effective; the first problem names its key. */
function checked(next: Values, effective: () => Settings): Settings {
  const result = Settings.safeParse(next);
  if (!result.success) throw settingProblem(result.error.issues[0]!, next);
  try {
    return effective();
  } catch (error) {
    const issue = (error as z.ZodError).issues?.[0];
    if (!issue) throw error;
    throw settingProblem(issue, next);
  }
}

/**
 * A scripted model's file is read at each call (it may be edited while Benchtop runs), but one
 * that a save points at must be there: a mistyped path is a 400 now, not a failed task later.
 */
function checkScripts(next: Settings, running: Readonly<Settings>): void {
  for (const [name, model] of Object.entries(next.models.providers)) {
    if (model.provider !== 'scripted' || !model.script) continue;
    if (running.models.providers[name]?.script === model.script) continue;
    try {
      accessSync(model.script, constants.R_OK);
    } catch (error) {
      const key = `models.providers.${name}.script`;
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw invalidRequest(
        `setting ${key}: cannot read ${model.script} (${code}); give the path of a JSON script file on this machine`,
        key,
      );
    }
  }
}

function settingProblem(issue: z.core.$ZodIssue, values: Values) {
  const path =
    issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : [...issue.path];
  const key = path.join('.');
  const value = path.reduce<unknown>((node, name) => (node as Values)?.[name as string], values);
  if (value === undefined && issue.code !== 'unrecognized_keys') {
    const choices = issue.code === 'invalid_value' ? `: one of ${issue.values.join(', ')}` : '';
    return invalidRequest(`setting ${key} is required${choices}`, key);
  }
  const message = issue.message.includes(key) ? issue.message : `setting ${key}: ${issue.message}`;
  return invalidRequest(message, key);
}

function storedValue(stored: Values, key: string): unknown {
  const [section, name] = key.split('.') as [string, string];
  const values = stored[section];
  const value = isPlainObject(values) ? values[name] : undefined;
  return value ?? (DEFAULTS as unknown as Record<string, Values>)[section]![name];
}

/** "section.key", and "models.providers.<name>" per model: the keys answers name. */
function settingKeys(values: Values): string[] {
  return Object.entries(values).flatMap(([section, inner]) =>
    isPlainObject(inner)
      ? Object.entries(inner).flatMap(([key, value]) =>
          section === 'models' && key === 'providers' && isPlainObject(value)
            ? Object.keys(value).map((name) => `models.providers.${name}`)
            : [`${section}.${key}`],
        )
      : [section],
  );
}

function masked(settings: Settings): Settings {
  const out = structuredClone(settings);
  for (const entry of Object.values(out.models.providers)) {
    if (entry.api_key) entry.api_key = MASKED_SECRET;
  }
  const url = out.proxy.advanced_proxy_url;
  if (url) out.proxy.advanced_proxy_url = maskProxy(url);
  if (out.notifications.webhook_secret) out.notifications.webhook_secret = MASKED_SECRET;
  for (const backend of out.browser.backends) {
    if (backend.url) backend.url = maskUrlPassword(backend.url);
  }
  return out;
}

/** A backend's URL with its password (a Grid's Basic auth) as "***"; as written without one. */
function maskUrlPassword(url: string): string {
  return URL.canParse(url) && new URL(url).password ? redactedUrl(url) : url;
}

/** The proxy URL with its password as "***"; a value that is no URL is masked after "user:". */
function maskProxy(url: string): string {
  try {
    return redactProxy(url);
  } catch {
    return url.replace(/^([^@/]*\/\/)?([^:@/]*):[^@]*@/, '$1$2:***@');
  }
}

/** config.json as it is now: one a person broke by hand while Benchtop ran is not overwritten. */
function storedNow(dataDir: string): Values {
  try {
    return readStoredSettings(dataDir);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw unavailable(`the settings cannot be saved: ${error.message}`, error);
  }
}
