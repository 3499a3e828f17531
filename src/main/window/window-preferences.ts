import type { Display, Rectangle } from 'electron';
import { z } from 'zod';
import { WINDOW_SIZE } from './window-options.js';

/** electron-store's get/set, as far as the window's preferences use them. */
export type PreferencesStore = {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
};

/**
 * electron-store's options for the preferences file in Electron's userData. Not its default name
 * `config`: userData and the data dir are both the app's folder in the platform's config dir, often
 * the very same folder, and the data dir's config.json holds the server settings `benchtop serve`
 * reads. A file that is not JSON reads as empty instead of throwing, so a half-written file costs
 * the window its place, not the app its start.
 */
export const PREFERENCES_FILE = { name: 'window-state', clearInvalidConfig: true } as const;

/** How long a window must stay still before its place is written: a drag fires dozens of moves. */
export const SAVE_DELAY_MS = 500;

/**
 * A window counts as on a display when its top strip, where it is grabbed to be moved, shows this
 * much on the display's work area (the part no menu bar, dock or taskbar covers).
 */
const GRAB_WIDTH = 120;
const GRAB_HEIGHT = 40;
/** Windows reports a window's invisible resize borders, a few pixels past the visible frame. */
const BORDER_SLACK = 8;

const coordinate = z.number().int().min(-100_000).max(100_000);
const length = z.number().int().positive().max(100_000);
const SavedWindow = z.object({
  bounds: z.object({ x: coordinate, y: coordinate, width: length, height: length }),
  maximized: z.boolean(),
});
type SavedWindow = z.infer<typeof SavedWindow>;

/** The screens of the renderer's hash routes, ids as encodeURIComponent writes them. */
const ID = String.raw`[\w.~%!*'()-]{1,200}`;
const Route = z
  .string()
  .regex(new RegExp(`^#/(?:sessions|settings|tasks(?:/${ID})?|computers/${ID})$`));

/** The parts of a BrowserWindow whose place and screen are remembered. */
export type TrackedWindow = {
  on(
    event: 'move' | 'resize' | 'maximize' | 'unmaximize' | 'close' | 'closed',
    listener: () => void,
  ): unknown;
  getNormalBounds(): Rectangle;
  isMaximized(): boolean;
  isFullScreen(): boolean;
  webContents: {
    on(
      event: 'did-navigate-in-page',
      listener: (event: unknown, url: string, isMainFrame: boolean) => void,
    ): unknown;
  };
};

/** What a new window starts with; no bounds means the default size, centred. */
export type RestoredWindow = { bounds?: Rectangle; maximized: boolean; route?: string };

export type WindowPreferences = {
  restore(displays: readonly Pick<Display, 'workArea'>[]): RestoredWindow;
  /** Remembers the window's place as it changes, and the screen of `page` it shows. */
  track(window: TrackedWindow, page: string): void;
  /** Writes a place still waiting out the save delay (the app is about to quit). */
  flush(): void;
};

/**
 * The window's own preferences: its size, place, maximized state and last screen. They are read
 * once when the app starts; nothing in them can stop the app: an unreadable store or a value of
 * the wrong shape is logged and the window opens with the defaults.
 */
export function windowPreferences(
  open: () => PreferencesStore,
  options: { saveDelayMs?: number; log?: (line: string) => void } = {},
): WindowPreferences {
  const saveDelayMs = options.saveDelayMs ?? SAVE_DELAY_MS;
  const log = options.log ?? ((line: string) => console.error(line));
  const store = openStore(open, log);
  const write = storeWriter(store, log);
  let saved = readValue(store, 'window', SavedWindow, log);
  const previousRoute = carriedOver(readValue(store, 'route', Route, log));
  let routeThisRun: string | undefined;
  let pending: (() => void) | undefined;

  return {
    restore: (displays) => ({
      bounds: saved && boundsOnDisplay(saved.bounds, displays),
      maximized: saved?.maximized ?? false,
      route: routeThisRun ?? previousRoute,
    }),
    track(window, page) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const capture = () => {
        clearTimeout(timer);
        pending = undefined;
        // Full screen (the live view's) is a passing state: its bounds are the display's.
        if (window.isFullScreen()) return;
        saved = { bounds: window.getNormalBounds(), maximized: window.isMaximized() };
        write('window', saved);
      };
      const later = () => {
        clearTimeout(timer);
        timer = setTimeout(capture, saveDelayMs);
        pending = capture;
      };
      for (const event of ['move', 'resize', 'maximize', 'unmaximize'] as const) {
        window.on(event, later);
      }
      window.on('close', capture);
      window.on('closed', () => {
        clearTimeout(timer);
        if (pending === capture) pending = undefined;
      });
      window.webContents.on('did-navigate-in-page', (_event, url, isMainFrame) => {
        const route = isMainFrame ? routeOf(url, page) : undefined;
        if (!route) return;
        routeThisRun = route;
        write('route', route);
      });
    },
    flush: () => pending?.(),
  };
}

/**
 * The saved bounds if a person can still reach the window on one of the connected displays (a
 * monitor unplugged since must not put it off-screen), its size kept between the window's
 * minimum and that display's work area.
 */
export function boundsOnDisplay(
  saved: Rectangle,
  displays: readonly Pick<Display, 'workArea'>[],
): Rectangle | undefined {
  for (const { workArea: area } of displays) {
    const bounds = {
      x: saved.x,
      y: saved.y,
      width: clamp(saved.width, WINDOW_SIZE.minWidth, area.width),
      height: clamp(saved.height, WINDOW_SIZE.minHeight, area.height),
    };
    const topInside =
      bounds.y >= area.y - BORDER_SLACK &&
      bounds.y + GRAB_HEIGHT <= area.y + area.height + BORDER_SLACK;
    const across =
      Math.min(bounds.x + bounds.width, area.x + area.width) - Math.max(bounds.x, area.x);
    if (topInside && across >= GRAB_WIDTH) return bounds;
  }
  return undefined;
}

/** The screen a navigation of the window's page went to, or nothing for any other URL. */
export function routeOf(url: string, page: string): string | undefined {
  const to = parseUrl(url);
  const expected = parseUrl(page);
  if (!to || !expected) return undefined;
  if (to.origin !== expected.origin || to.pathname !== expected.pathname) return undefined;
  return Route.safeParse(to.hash).success ? to.hash : undefined;
}

/**
 * The screen to reopen from an earlier run. Tasks are kept, so a task reopens; computers end when
 * the app quits, so a computer's live view would show one that is gone: the sessions list instead.
 */
function carriedOver(route: string | undefined): string | undefined {
  return route?.startsWith('#/computers/') ? '#/sessions' : route;
}

function openStore(
  open: () => PreferencesStore,
  log: (line: string) => void,
): PreferencesStore | undefined {
  try {
    return open();
  } catch (error) {
    log(`benchtop: window preferences unreadable, using the defaults: ${String(error)}`);
    return undefined;
  }
}

function readValue<T>(
  store: PreferencesStore | undefined,
  key: string,
  schema: z.ZodType<T>,
  log: (line: string) => void,
): T | undefined {
  if (!store) return undefined;
  let value: unknown;
  try {
    value = store.get(key);
  } catch (error) {
    log(`benchtop: window preference "${key}" unreadable, using the default: ${String(error)}`);
    return undefined;
  }
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  log(`benchtop: window preference "${key}" is not valid, using the default`);
  return undefined;
}

/**
 * Writes a value when it differs from the last one written. A failing disk is reported once: the
 * window goes on working, it only forgets its place next time.
 */
function storeWriter(
  store: PreferencesStore | undefined,
  log: (line: string) => void,
): (key: string, value: unknown) => void {
  const written = new Map<string, string>();
  let reported = false;
  return (key, value) => {
    const text = JSON.stringify(value);
    if (!store || written.get(key) === text) return;
    try {
      store.set(key, value);
      written.set(key, text);
    } catch (error) {
      if (!reported) log(`benchtop: window preferences not saved: ${String(error)}`);
      reported = true;
    }
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(value, max));
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
