import type { IncomingHttpHeaders } from 'node:http';

/**
 * The first Lightcone SDK releases whose Responses types are typed models (integer created_at, a
 * closed set of computer actions) and whose examples read coordinates as 0–999: Python 2.35.0
 * and TypeScript 0.10.0. Earlier ones return the answer as an untyped object.
 */
export const TYPED_RESPONSES_SINCE = {
  python: [2, 35, 0],
  js: [0, 10, 0],
} as const satisfies Record<string, readonly [number, number, number]>;

/** Another vendor's Stainless SDK (OpenAI's, say) sends the same headers; its User-Agent says whose. */
const STAINLESS_AGENT = /^(\w+)\/(Python|JS) /;

/** Whether the request comes from a Lightcone SDK with the typed Responses models. */
export function isTypedLightconeSdk(headers: IncomingHttpHeaders): boolean {
  const lang = first(headers['x-stainless-lang']);
  const version = parseVersion(first(headers['x-stainless-package-version']));
  if (!lang || !version || !(lang in TYPED_RESPONSES_SINCE)) return false;
  const vendor = STAINLESS_AGENT.exec(first(headers['user-agent']) ?? '')?.[1];
  if (vendor && vendor !== 'Lightcone' && vendor !== 'AsyncLightcone') return false;
  const since = TYPED_RESPONSES_SINCE[lang as keyof typeof TYPED_RESPONSES_SINCE];
  for (const [part, wanted] of since.entries()) {
    if (version[part] !== wanted) return version[part]! > wanted;
  }
  return true;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** "2.39.0", "0.10.0-alpha.1" → [major, minor, patch]; anything else → undefined. */
function parseVersion(text: string | undefined): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text?.trim() ?? '');
  return match ? match.slice(1, 4).map(Number) : undefined;
}
