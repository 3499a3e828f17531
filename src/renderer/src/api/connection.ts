/** Where the API is and the key to call it with. */
export type Connection = { baseUrl: string; apiKey: string };

const STORAGE_KEY = 'benchtop.apiKey';
const FRAGMENT_KEY = /(?:^#|&)key=([^&]+)/;

type PreloadBridge = { benchtop?: { connection?: Connection } };

/**
 * The Electron preload hands the window its connection; in a plain browser the /ui/ link carries
 * the key in the fragment (never sent to a server), which is moved to sessionStorage and taken out
 * of the address bar so it is not left in history or on screen.
 */
export function resolveConnection(): Connection | undefined {
  const bridged = (window as unknown as PreloadBridge).benchtop?.connection;
  if (bridged?.apiKey && bridged.baseUrl) return bridged;
  const match = FRAGMENT_KEY.exec(location.hash);
  if (match) {
    sessionStorage.setItem(STORAGE_KEY, decodeURIComponent(match[1]!));
    history.replaceState(null, '', `${location.pathname}${location.search}#/sessions`);
  }
  const apiKey = sessionStorage.getItem(STORAGE_KEY);
  return apiKey ? { baseUrl: location.origin, apiKey } : undefined;
}

/** A key pasted by hand (the link was opened without one). */
export function rememberKey(apiKey: string): Connection {
  sessionStorage.setItem(STORAGE_KEY, apiKey);
  return { baseUrl: location.origin, apiKey };
}

/** Forgets the page's key (only `apiKey` when named: a newer one stays). */
export function forgetKey(apiKey?: string): void {
  if (apiKey === undefined || sessionStorage.getItem(STORAGE_KEY) === apiKey) {
    sessionStorage.removeItem(STORAGE_KEY);
  }
}

/** A /ui/ link with a key was opened in this page (a new link after a restart, say). */
export function linkHasKey(): boolean {
  return FRAGMENT_KEY.test(location.hash);
}

/** The desktop app's window, whose key comes from the app, not from a link. */
export function inDesktopApp(): boolean {
  return Boolean((window as unknown as PreloadBridge).benchtop?.connection);
}
