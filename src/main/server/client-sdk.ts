import type { IncomingHttpHeaders } from 'node:http';
import { printable, requesterName, WINDOW_SOURCE } from '../../shared/requester.js';
import type { Principal } from '../core/store/key-store.js';

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

/** The Stainless SDK languages by the names their users know them. */
const SDK_LANGUAGES: Record<string, string> = { python: 'Python', js: 'TypeScript' };

/**
 * Who sends a request, as an approval of its action names them ("Python SDK 2.39.0 (key
 * sk_5bRW…)"): a Lightcone SDK by its language and version, another client by the first product
 * of its User-Agent ("curl/8.5.0").
 */
export function describeClient(headers: IncomingHttpHeaders, principal: Principal): string {
  return requesterName(clientName(headers), principal.keyPrefix);
}

/** A request the window sent, for a person in it (WINDOW_SOURCE). */
export function fromTheWindow(headers: IncomingHttpHeaders): boolean {
  return headers[WINDOW_SOURCE.header] === WINDOW_SOURCE.value;
}

/**
 * Who sent a request, for a person (a route's `requester`): a person in the window, or the client
 * as describeClient names it.
 */
export function whoAsked(headers: IncomingHttpHeaders, principal: Principal): string {
  return fromTheWindow(headers)
    ? requesterName('a person in the window', principal.keyPrefix)
    : describeClient(headers, principal);
}

function clientName(headers: IncomingHttpHeaders): string | undefined {
  const agent = printable(first(headers['user-agent']) ?? '');
  const lang = SDK_LANGUAGES[first(headers['x-stainless-lang']) ?? ''];
  const version = printable(first(headers['x-stainless-package-version']) ?? '').split(' ')[0];
  if (lang && version) {
    const vendor = STAINLESS_AGENT.exec(agent)?.[1];
    const ours = !vendor || vendor === 'Lightcone' || vendor === 'AsyncLightcone';
    return `${ours ? '' : `${vendor} `}${lang} SDK ${version}`;
  }
  return agent.split(' ')[0];
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** "2.39.0", "0.10.0-alpha.1" → [major, minor, patch]; anything else → undefined. */
function parseVersion(text: string | undefined): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text?.trim() ?? '');
  return match ? match.slice(1, 4).map(Number) : undefined;
}
