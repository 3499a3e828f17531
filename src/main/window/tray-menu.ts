import type { MenuItemConstructorOptions } from 'electron';
import { sdkSnippet } from '../../shared/window-connection.js';

export type TrayDeps = {
  serverUrl: string;
  /** The window's own key: trusted by this process only, gone when Benchtop quits. */
  windowKey: string;
  /** The core's KeyStore: a stored key outlives restarts (revocable in Settings). */
  keys: { create(org: string): { key: string } };
  /** The core's failed-authentication record: the window lifts blocks in-process, since a
   * blocked loopback address cannot reach the server over HTTP. */
  blocks: { blocks(): Array<{ ip: string }>; lift(ip: string): boolean };
  writeClipboard(text: string): void;
  openWindow(): void;
  quit(): void;
};

/**
 * The tray's menu (and the macOS dock's): open the window, hand the SDKs a base URL and key, quit.
 * Two snippets, because the window's key dies with the process while an SDK user usually wants
 * one that keeps working after a restart.
 */
export function trayMenuTemplate(deps: TrayDeps): MenuItemConstructorOptions[] {
  return [
    { label: 'Open Benchtop', click: () => deps.openWindow() },
    { label: `Serving at ${deps.serverUrl}`, enabled: false },
    { type: 'separator' },
    {
      label: 'Copy SDK Snippet (key valid until Benchtop quits)',
      click: () => deps.writeClipboard(sdkSnippet(deps.serverUrl, deps.windowKey)),
    },
    {
      label: 'Copy SDK Snippet with a New Stored Key',
      click: () => deps.writeClipboard(sdkSnippet(deps.serverUrl, deps.keys.create('local').key)),
    },
    {
      label: 'Lift IP Blocks',
      click: () => {
        for (const block of deps.blocks.blocks()) deps.blocks.lift(block.ip);
      },
    },
    { type: 'separator' },
    { label: 'Quit Benchtop (ends every computer)', click: () => deps.quit() },
  ];
}
