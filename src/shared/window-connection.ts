/**
 * How the Electron window learns where the server is: main encodes the connection as one
 * command-line switch of the renderer process, the preload decodes it. No imports on purpose: the
 * sandboxed preload is bundled with this file and may require nothing but `electron`.
 */

/** Where the API is and the key to call it with. */
export type WindowConnection = { baseUrl: string; apiKey: string };

/** What the preload puts on `window.benchtop`, and nothing more. */
export type BenchtopBridge = { connection: WindowConnection; platform: string };

const SWITCH = '--benchtop-connection=';
const KEY_PATTERN = /^sk_[A-Za-z0-9_-]{16,200}$/;

/** The renderer's extra argument (`webPreferences.additionalArguments`). */
export function connectionArguments(connection: WindowConnection): string[] {
  return [`${SWITCH}${encodeURIComponent(JSON.stringify(connection))}`];
}

/**
 * The connection in a renderer's argv, or undefined when it is absent or malformed: a preload
 * that cannot trust its input hands the page nothing rather than something half right.
 */
export function connectionFromArguments(argv: readonly string[]): WindowConnection | undefined {
  const encoded = argv.find((arg) => arg.startsWith(SWITCH))?.slice(SWITCH.length);
  if (!encoded) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(decodeURIComponent(encoded));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { baseUrl, apiKey } = value as Record<string, unknown>;
  if (typeof baseUrl !== 'string' || typeof apiKey !== 'string') return undefined;
  if (!isServerOrigin(baseUrl) || !KEY_PATTERN.test(apiKey)) return undefined;
  return { baseUrl, apiKey };
}

/** An http(s) server with nothing after it, as `startServer()` reports its URL. */
function isServerOrigin(url: string): boolean {
  try {
    const parsed = new URL(url);
    const bare = parsed.pathname === '/' && !parsed.search && !parsed.hash && !parsed.username;
    return /^https?:$/.test(parsed.protocol) && bare && !url.endsWith('/');
  } catch {
    return false;
  }
}

/** What an SDK user pastes into a shell to point the Lightcone SDKs at this server. */
export function sdkSnippet(baseUrl: string, apiKey: string): string {
  return `export LIGHTCONE_BASE_URL=${baseUrl} TZAFON_API_KEY=${apiKey}`;
}
