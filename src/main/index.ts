import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
  Menu,
  nativeImage,
  Notification,
  safeStorage,
  screen,
  session,
  shell,
  Tray,
} from 'electron';
import Store from 'electron-store';
import { defaultDataDir } from './core/config.js';
import { STOP_SIGNALS } from './core/runtime/process-supervisor.js';
import { builtAppPaths, startBenchtop, type Benchtop } from './start-benchtop.js';
import { notifyAttention, type ShowNotification } from './window/attention-notifications.js';
import { navigationGuard } from './window/navigation-guard.js';
import { closeOnQuit } from './window/quit-handling.js';
import { trayMenuTemplate } from './window/tray-menu.js';
import {
  PREFERENCES_FILE,
  windowPreferences,
  type WindowPreferences,
} from './window/window-preferences.js';
import {
  appPaths,
  devServerFlags,
  trayIconFile,
  windowOptions,
  windowOrigins,
  windowUrl,
} from './window/window-options.js';

/**
 * Electron root: the CLI's server, in-process, and a window that is one more client of it. The
 * decisions live in ./window (unit-tested without Electron); this file only wires them.
 */
const windowKey = `sk_${randomBytes(24).toString('base64url')}`;
const devUrl = process.env.ELECTRON_RENDERER_URL;
const paths = appPaths(import.meta.dirname);
let window: BrowserWindow | undefined;
let tray: Tray | undefined;

function openWindow(benchtop: Benchtop, preferences: WindowPreferences, route?: string): void {
  if (window && !window.isDestroyed()) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    if (route)
      void window.webContents.executeJavaScript(`location.hash = ${JSON.stringify(route)}`);
    return;
  }
  const serverUrl = benchtop.server.url;
  const restored = preferences.restore(screen.getAllDisplays());
  const created = new BrowserWindow(
    windowOptions({
      preloadPath: paths.preload,
      connection: { baseUrl: serverUrl, apiKey: windowKey },
      iconPath: join(paths.resources, 'icon.png'),
      bounds: restored.bounds,
    }),
  );
  const guard = navigationGuard(windowOrigins(serverUrl, devUrl), (url) => {
    void shell.openExternal(url);
  });
  created.webContents.on('will-navigate', guard.onNavigate);
  created.webContents.on('will-redirect', guard.onRedirect);
  created.webContents.setWindowOpenHandler(guard.onWindowOpen);
  session.defaultSession.setPermissionRequestHandler(guard.onPermission);
  created.once('ready-to-show', () => {
    if (restored.maximized) created.maximize();
    created.show();
  });
  preferences.track(created, windowUrl(serverUrl, devUrl));
  created.on('closed', () => {
    if (window === created) window = undefined;
  });
  window = created;
  created.loadURL(windowUrl(serverUrl, devUrl, route ?? restored.route)).catch((error: unknown) => {
    dialog.showErrorBox('Benchtop could not load its window', String(error));
  });
}

function createTray(benchtop: Benchtop, preferences: WindowPreferences): void {
  tray = new Tray(
    nativeImage.createFromPath(join(paths.resources, trayIconFile(process.platform))),
  );
  tray.setToolTip('Benchtop');
  const template = trayMenuTemplate({
    serverUrl: benchtop.server.url,
    windowKey,
    keys: benchtop.core.keys,
    blocks: benchtop.core.guards.failures,
    writeClipboard: (text) => clipboard.writeText(text),
    openWindow: () => openWindow(benchtop, preferences),
    quit: () => app.quit(),
  });
  tray.setContextMenu(Menu.buildFromTemplate(template));
  tray.on('click', () => openWindow(benchtop, preferences));
}

/** Notifications shown and not yet closed: one collected early would lose its click handler. */
const notifications = new Set<Notification>();

const showNotification: ShowNotification = (notice, onClick) => {
  const shown = new Notification(notice);
  notifications.add(shown);
  shown.on('click', () => {
    notifications.delete(shown);
    onClick();
  });
  shown.on('close', () => notifications.delete(shown));
  shown.show();
};

function main(): void {
  // The settings and keys `benchtop serve` uses (BENCHTOP_DATA_DIR or the platform's folder).
  const starting = startBenchtop({
    paths: builtAppPaths(import.meta.dirname),
    dataDir: defaultDataDir(),
    windowKey,
    flags: devServerFlags(devUrl),
    // The vault's secrets sealed by the OS keychain (Keychain, DPAPI, libsecret).
    safeStorage,
  });
  // The window's size, place and last screen: window-state.json in userData (electron-store's
  // folder), never the server's config.json.
  const preferences = windowPreferences(() => new Store(PREFERENCES_FILE));
  closeOnQuit(
    app,
    (onStep) =>
      starting.then(
        (benchtop) => benchtop.close(onStep),
        () => undefined,
      ),
    {
      onClosing: () => {
        preferences.flush();
        tray?.destroy();
        for (const open of BrowserWindow.getAllWindows()) open.hide();
      },
    },
  );
  for (const signal of STOP_SIGNALS) process.on(signal, () => app.quit());
  // The server keeps serving the SDKs with every window closed; the tray or a relaunch reopens one.
  app.on('window-all-closed', () => undefined);
  Promise.all([starting, app.whenReady()]).then(
    ([benchtop]) => {
      createTray(benchtop, preferences);
      openWindow(benchtop, preferences);
      if (Notification.isSupported()) {
        const stop = notifyAttention(benchtop.core.attention, showNotification, (route) =>
          openWindow(benchtop, preferences, route),
        );
        app.on('will-quit', stop);
      }
      app.on('second-instance', () => openWindow(benchtop, preferences));
      app.on('activate', () => openWindow(benchtop, preferences));
    },
    (error: unknown) => {
      void app.whenReady().then(() => {
        dialog.showErrorBox('Benchtop could not start', (error as Error).message);
        app.exit(1);
      });
    },
  );
}

// One app per machine: a second launch (from a menu, or `npm start` again) opens the first's window.
if (app.requestSingleInstanceLock()) main();
else app.quit();
