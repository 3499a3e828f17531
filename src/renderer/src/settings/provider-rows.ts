import type { ModelConfig, ProviderKind, SettingsPatch } from '../../../shared/settings.js';

export const KINDS: ProviderKind[] = [
  'lightcone',
  'openai',
  'anthropic',
  'openai-compatible',
  'scripted',
];

export const TEXT_FIELDS = ['base_url', 'model', 'api_key_env', 'api_key', 'script'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
/** Whole numbers: the call's limit and how often a failure that may pass is tried again. */
export const NUMBER_FIELDS = ['timeout_ms', 'max_retries'] as const;
export type NumberField = (typeof NUMBER_FIELDS)[number];
export const isNumberField = (field: string): field is NumberField =>
  (NUMBER_FIELDS as readonly string[]).includes(field);
/** Dollars per million tokens: models.providers.<name>.price. */
export const PRICE_FIELDS = ['input_per_mtok', 'output_per_mtok', 'cached_input_per_mtok'] as const;
export type PriceField = (typeof PRICE_FIELDS)[number];

/** One provider as the form edits it: every field a string, '' meaning "not set". */
export type ProviderRow = {
  name: string;
  provider: ProviderKind;
} & Record<TextField | NumberField | PriceField, string>;

export function toRows(providers: Record<string, ModelConfig>): ProviderRow[] {
  return Object.entries(providers).map(([name, config]) => ({
    name,
    provider: config.provider,
    base_url: config.base_url ?? '',
    model: config.model ?? '',
    api_key_env: config.api_key_env ?? '',
    api_key: config.api_key ?? '',
    script: config.script ?? '',
    timeout_ms: config.timeout_ms === undefined ? '' : String(config.timeout_ms),
    max_retries: config.max_retries === undefined ? '' : String(config.max_retries),
    input_per_mtok: config.price ? String(config.price.input_per_mtok) : '',
    output_per_mtok: config.price ? String(config.price.output_per_mtok) : '',
    cached_input_per_mtok:
      config.price?.cached_input_per_mtok === undefined
        ? ''
        : String(config.price.cached_input_per_mtok),
  }));
}

export function emptyRow(name: string, provider: ProviderKind): ProviderRow {
  return { ...toRows({ [name]: { provider } })[0]! };
}

type ProviderPatch = Record<string, unknown>;

/**
 * The PATCH for the providers: only what changed. A removed provider or a cleared field is null
 * (the server removes it); an api_key left at the mask is not sent, so the stored key stays.
 */
export function providersPatch(
  original: Record<string, ModelConfig>,
  rows: ProviderRow[],
): Record<string, ProviderPatch | null> {
  const patch: Record<string, ProviderPatch | null> = {};
  const names = new Set(rows.map((row) => row.name));
  for (const name of Object.keys(original)) if (!names.has(name)) patch[name] = null;
  for (const row of rows) {
    const before = original[row.name] ? toRows({ [row.name]: original[row.name]! })[0] : undefined;
    const changes: ProviderPatch = {};
    if (row.provider !== before?.provider) changes.provider = row.provider;
    for (const field of [...TEXT_FIELDS, ...NUMBER_FIELDS]) {
      const value = row[field].trim();
      if (value === (before?.[field] ?? '')) continue;
      if (value === '') {
        if (before) changes[field] = null;
      } else {
        changes[field] = isNumberField(field) ? Number(value) : value;
      }
    }
    const price = pricePatch(row, before);
    if (price !== undefined) changes.price = price;
    if (Object.keys(changes).length > 0) patch[row.name] = changes;
  }
  return patch;
}

/**
 * The price when any of its fields changed: all cleared removes it; otherwise it is sent whole,
 * a cleared cached price as null (the server merges objects, so leaving it out would keep it).
 * A field that is not a number reaches the server, whose 400 names it.
 */
function pricePatch(row: ProviderRow, before: ProviderRow | undefined): unknown {
  const value = (field: PriceField) => row[field].trim();
  if (PRICE_FIELDS.every((field) => value(field) === (before?.[field] ?? ''))) return undefined;
  if (PRICE_FIELDS.every((field) => value(field) === '')) return before ? null : undefined;
  const number = (field: PriceField) => (value(field) === '' ? null : Number(value(field)));
  return {
    input_per_mtok: number('input_per_mtok'),
    output_per_mtok: number('output_per_mtok'),
    cached_input_per_mtok: number('cached_input_per_mtok'),
  };
}

export function modelsPatch(
  original: { default: string; providers: Record<string, ModelConfig>; local_only?: boolean },
  defaultModel: string,
  rows: ProviderRow[],
  localOnly = original.local_only ?? false,
): SettingsPatch | undefined {
  const providers = providersPatch(original.providers, rows);
  const models: Record<string, unknown> = {};
  if (Object.keys(providers).length > 0) models.providers = providers;
  if (defaultModel !== original.default) models.default = defaultModel;
  if (localOnly !== (original.local_only ?? false)) models.local_only = localOnly;
  // Nulls remove keys on the server; the patch type only describes the values it stores.
  return Object.keys(models).length > 0 ? ({ models } as SettingsPatch) : undefined;
}
