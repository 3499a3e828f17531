import { connectionFromArguments, type BenchtopBridge } from '../shared/window-connection.js';

/** The one call of Electron's contextBridge the preload makes. */
export type ContextBridge = { exposeInMainWorld(key: string, api: BenchtopBridge): void };

/**
 * Puts `window.benchtop = {connection, platform}` in the page and nothing else: the page talks
 * only HTTP. Without a valid connection nothing is exposed and the page asks for a key.
 */
export function exposeConnection(
  bridge: ContextBridge,
  argv: readonly string[],
  platform: string,
): BenchtopBridge | undefined {
  const connection = connectionFromArguments(argv);
  if (!connection) return undefined;
  const api: BenchtopBridge = { connection, platform };
  bridge.exposeInMainWorld('benchtop', api);
  return api;
}
