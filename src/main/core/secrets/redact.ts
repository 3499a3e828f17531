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
  for (const form of forms(secret)) {
    if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/** A secret as it may appear in text: as is, URL-encoded, and escaped inside a JSON string. */
function forms(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  const json = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, encoded, json])];
}
