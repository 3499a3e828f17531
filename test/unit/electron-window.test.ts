import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appPaths,
  devServerFlags,
  trayIconFile,
  windowOptions,
  windowOrigins,
  windowUrl,
} from '../../src/main/window/window-options.js';
import { connectionFromArguments } from '../../src/shared/window-connection.js';

const connection = { baseUrl: 'http://127.0.0.1:4422', apiKey: `sk_${'w'.repeat(32)}` };

describe('the Electron window', () => {
  it('is sandboxed, isolated, without Node, with web security on and the preload set', () => {
    const options = windowOptions({ preloadPath: '/app/out/preload/index.cjs', connection });
    expect(options.webPreferences).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
    expect(options.show).toBe(false);
  });

  it('hands the renderer its connection on argv and nothing else', () => {
    const { additionalArguments } = windowOptions({
      preloadPath: '/p.cjs',
      connection,
    }).webPreferences!;
    expect(additionalArguments).toHaveLength(1);
    expect(connectionFromArguments(['electron', ...additionalArguments!])).toEqual(connection);
  });

  it("loads the UI the server serves at /ui/, or the dev server's page under npm run dev", () => {
    expect(windowUrl('http://127.0.0.1:4422', undefined)).toBe('http://127.0.0.1:4422/ui/');
    expect(windowUrl('http://127.0.0.1:4422', 'http://localhost:5173')).toBe(
      'http://localhost:5173',
    );
  });

  it('allows the server origin, plus the dev server with CORS opened to it under npm run dev', () => {
    expect(windowOrigins('http://127.0.0.1:4422', undefined)).toEqual(['http://127.0.0.1:4422']);
    expect(windowOrigins('http://127.0.0.1:4422', 'http://localhost:5173/')).toEqual([
      'http://127.0.0.1:4422',
      'http://localhost:5173',
    ]);
    expect(devServerFlags(undefined)).toBeUndefined();
    expect(devServerFlags('http://localhost:5173/')).toEqual({
      server: { cors_origins: ['http://localhost:5173'] },
    });
  });

  it('finds the preload and the icons from the built main bundle', () => {
    const paths = appPaths(join('/app', 'out', 'main'));
    expect(paths.preload).toBe(join('/app', 'out', 'preload', 'index.cjs'));
    expect(join(paths.resources, trayIconFile('linux'))).toBe(
      join('/app', 'resources', 'tray.png'),
    );
    expect(trayIconFile('darwin')).toBe('trayTemplate.png');
  });
});
