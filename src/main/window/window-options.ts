import { join } from 'node:path';
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';
import { connectionArguments, type WindowConnection } from '../../shared/window-connection.js';

/** Where the built app's files are, relative to out/main/index.js (and inside the package). */
export function appPaths(mainDir: string): { preload: string; resources: string } {
  return {
    preload: join(mainDir, '..', 'preload', 'index.cjs'),
    resources: join(mainDir, '..', '..', 'resources'),
  };
}

/** The first window's size, and the smallest the screens' layouts still work at. */
export const WINDOW_SIZE = { width: 1280, height: 860, minWidth: 900, minHeight: 600 } as const;

/**
 * The window is one more client of the HTTP API, and the least trusted one: a sandboxed renderer
 * without Node, isolated from its preload, with web security on. It gets its connection on argv.
 */
export function windowOptions(options: {
  preloadPath: string;
  connection: WindowConnection;
  iconPath?: string;
  /** Where the window was last time, already checked to be on a connected display. */
  bounds?: Rectangle;
}): BrowserWindowConstructorOptions {
  return {
    title: 'Benchtop',
    ...WINDOW_SIZE,
    ...options.bounds,
    // Shown on ready-to-show, so the user never sees an empty white frame.
    show: false,
    icon: options.iconPath,
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      additionalArguments: connectionArguments(options.connection),
    },
  };
}

/**
 * What the window loads: the UI the server itself serves at /ui/, so the page is same-origin with
 * the API. Under `npm run dev` it is electron-vite's dev server instead (hot reload). A route (a
 * screen's hash, such as `#/tasks`) opens the window on that screen.
 */
export function windowUrl(
  serverUrl: string,
  devRendererUrl: string | undefined,
  route?: string,
): string {
  const page = devRendererUrl || `${serverUrl}/ui/`;
  if (!route) return page;
  const url = new URL(page);
  url.hash = route;
  return url.toString();
}

/** The origins the window may show: the server's, and the dev server's under `npm run dev`. */
export function windowOrigins(serverUrl: string, devRendererUrl: string | undefined): string[] {
  const origins = [new URL(serverUrl).origin];
  if (devRendererUrl) origins.push(new URL(devRendererUrl).origin);
  return [...new Set(origins)];
}

/**
 * Command-line flags for startBenchtop: under `npm run dev` the page comes from the dev server,
 * another origin, whose requests the closed CORS would refuse.
 */
export function devServerFlags(
  devRendererUrl: string | undefined,
): Record<string, unknown> | undefined {
  if (!devRendererUrl) return undefined;
  return { server: { cors_origins: [new URL(devRendererUrl).origin] } };
}

/** The tray's icon: a black template image that macOS tints for its menu bar; colour elsewhere. */
export function trayIconFile(platform: string): string {
  return platform === 'darwin' ? 'trayTemplate.png' : 'tray.png';
}
