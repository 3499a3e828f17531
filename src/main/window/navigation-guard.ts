/** The part of an Electron event a guard uses. */
export type Preventable = { preventDefault(): void };
/** will-navigate's and will-redirect's event: the target is on the event (the argument is deprecated). */
export type NavigationEvent = Preventable & { url: string };

/** Permissions a page of ours may get: copying a new key, and full screen for the live view. */
const GRANTED_PERMISSIONS = new Set(['clipboard-sanitized-write', 'fullscreen']);

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Handlers for the window's webContents and session (properties, so they can be passed as is). */
export type NavigationGuard = {
  allows: (url: string) => boolean;
  onNavigate: (event: NavigationEvent) => void;
  onRedirect: (event: NavigationEvent) => void;
  onWindowOpen: (details: { url: string }) => { action: 'deny' };
  onPermission: (
    contents: unknown,
    permission: string,
    callback: (granted: boolean) => void,
    details: { requestingUrl: string },
  ) => void;
};

/**
 * The window's navigation lock. It shows only the server's pages: a link elsewhere (a computer's
 * page URL in a task timeline, the docs) opens in the system browser when it is http(s), and
 * anything else (file:, javascript:, custom schemes) goes nowhere.
 */
export function navigationGuard(
  origins: readonly string[],
  openExternal: (url: string) => void,
): NavigationGuard {
  const allowed = new Set(origins);
  const allows = (url: string) => {
    const origin = originOf(url);
    return origin !== undefined && allowed.has(origin);
  };
  return {
    allows,
    onNavigate(event) {
      if (allows(event.url)) return;
      event.preventDefault();
      if (isWebUrl(event.url)) openExternal(event.url);
    },
    onRedirect(event) {
      // A redirect is the server's doing, not the person's: stop it, open nothing.
      if (!allows(event.url)) event.preventDefault();
    },
    onWindowOpen({ url }) {
      if (isWebUrl(url)) openExternal(url);
      return { action: 'deny' };
    },
    onPermission(_contents, permission, callback, details) {
      callback(allows(details.requestingUrl) && GRANTED_PERMISSIONS.has(permission));
    },
  };
}

/** Only http(s) ever reaches the system browser: other schemes can launch local programs. */
export function isWebUrl(url: string): boolean {
  try {
    return /^https?:$/.test(new URL(url).protocol);
  } catch {
    return false;
  }
}
