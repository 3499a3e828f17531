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

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
