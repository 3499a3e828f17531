import { REDACTED, redactValues, without } from '../secrets/redact.js';

export { REDACTED };

/** Benchtop API keys (`sk_` and 32 base64url characters; any long enough run, to be safe). */
const BENCHTOP_KEY = /\bsk_[A-Za-z0-9_-]{16,}/g;
/** The password of a URL's userinfo (a proxy URL: `http://user:password@host`). */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"'<>]*:)[^\s/@"'<>]+@/gi;
/** Shorter values are not treated as secrets: replacing them would garble ordinary text. */
const MIN_SECRET_LENGTH = 6;

/**
 * Removes secrets from text before anything is recorded (docs/API.md §13): the secrets it is
 * told of (provider keys, the proxy password, a trusted API key) wherever they appear, every
 * Benchtop API key by its shape, and passwords in URLs. The list is read at each call, so a key
 * set in settings a moment ago is scrubbed too.
 */
export class SecretScrubber {
  constructor(
    private readonly secrets: () => readonly string[],
    /** The vault's values: scrubbed from their minimum length on. */
    private readonly vault: () => readonly string[] = () => [],
  ) {}

  scrub(text: string): string {
    let out = text.replace(BENCHTOP_KEY, REDACTED).replace(URL_PASSWORD, `$1${REDACTED}@`);
    for (const secret of this.secrets()) {
      if (secret.length >= MIN_SECRET_LENGTH) out = without(out, secret);
    }
    return redactValues(out, this.vault());
  }
}

/** The password of a proxy URL from settings, if it has one. */
export function proxyPassword(proxyUrl: string | null): string | undefined {
  if (!proxyUrl) return undefined;
  try {
    const password = new URL(proxyUrl).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
