import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { app, BrowserWindow, dialog, shell } from 'electron';
import { startBenchtop, type Benchtop } from './start-benchtop.js';

/** Electron root: the same server as the CLI, in-process, and a window that is one more client. */
const windowKey = `sk_${randomBytes(24).toString('base64url')}`;
let benchtop: Benchtop | undefined;

async function openWindow(url: string): Promise<void> {
  const window = new BrowserWindow({
    width: 1280,
    height: 860,
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      additionalArguments: [`--benchtop-base-url=${url}`, `--benchtop-key=${windowKey}`],
    },
  });
  const origin = new URL(url).origin;
  window.webContents.on('will-navigate', (event, target) => {
    if (new URL(target).origin !== origin) event.preventDefault();
  });
  window.webContents.setWindowOpenHandler(({ url: target }) => {
    void shell.openExternal(target);
    return { action: 'deny' };
  });
  if (process.env.ELECTRON_RENDERER_URL) await window.loadURL(process.env.ELECTRON_RENDERER_URL);
  else await window.loadFile(join(import.meta.dirname, '../renderer/index.html'));
}

app.whenReady().then(
  async () => {
    try {
      benchtop = await startBenchtop({ dataDir: app.getPath('userData'), windowKey });
    } catch (error) {
      dialog.showErrorBox('Benchtop could not start', (error as Error).message);
      app.exit(1);
      return;
    }
    await openWindow(benchtop.server.url);
  },
  (error: unknown) => console.error(error),
);

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

let quitting = false;
app.on('before-quit', (event) => {
  if (quitting || !benchtop) return;
  event.preventDefault();
  quitting = true;
  void benchtop.close().finally(() => app.quit());
});
