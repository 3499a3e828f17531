/** What a removed secret reads as in recordings, bundles and answers. */
export const REDACTED = '[redacted]';
/** The vault's values are secrets by definition; it refuses shorter ones. */
export const MIN_VAULT_SECRET_LENGTH = 4;

/**
 * Text with every one of `values` (the vault's, longest first so a value that holds another goes
 * whole) replaced: for answers, where nothing but the vault's values is taken out.
 */
export function redactValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const secret of values) {
    if (secret.length >= MIN_VAULT_SECRET_LENGTH) out = without(out, secret);
  }
  return out;
}

/** Text with every form of `secret` replaced. */
export function without(text: string, secret: string): string {
  let out = text;
  for (const form of formsOfSecret(secret)) {
    if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/** A secret as it may appear in text: as is, URL-encoded, and escaped inside a JSON string. */
function formsOfSecret(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  const json = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, encoded, json])];
}

/** A character JSON writes escaped, or writes between values: only the JSON text can tell then. */
// eslint-disable-next-line no-control-regex
const NOT_PLAIN = /["\\{}[\]:,\u0000-\u001f\u007f\ud800-\udfff]/;
/** The forms of each list of values (the vault hands out the same list until it changes). */
const formsOf = new WeakMap<readonly string[], string[] | null>();

/**
 * Whether redactValues could change the JSON of `value`. Walking it costs a fraction of writing it
 * as JSON, which answers without a value then skip. The JSON of a value whose values are plain
 * text (none of NOT_PLAIN) can hold one only inside one of its strings, keys or literals, so
 * those are searched for every form; with any other value, always true.
 */
export function mayHoldValues(value: unknown, values: readonly string[]): boolean {
  let forms = formsOf.get(values);
  if (forms === undefined) {
    const kept = values.filter((secret) => secret.length >= MIN_VAULT_SECRET_LENGTH);
    forms = kept.some((secret) => NOT_PLAIN.test(secret))
      ? null
      : [...new Set(kept.flatMap(formsOfSecret))];
    formsOf.set(values, forms);
  }
  return forms === null || (forms.length > 0 && holds(value, forms));
}

function holds(value: unknown, forms: readonly string[]): boolean {
  if (typeof value === 'string') return forms.some((form) => value.includes(form));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return holds(String(value), forms);
  }
  if (typeof value !== 'object') return false;
  // What JSON.stringify would write instead is not walked: only its text can tell.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(value)) return value.some((item) => holds(item, forms));
  for (const [key, item] of Object.entries(value)) {
    if (holds(key, forms) || holds(item, forms)) return true;
  }
  return false;
}
