import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../core/create-core.js';
import { createApp, type AppOptions } from './create-app.js';

export type RunningServer = { url: string; port: number; close(): Promise<void> };

/** Listens (port 0 picks a free one) and tells core its URL. close() ends open connections too. */
export async function startServer(
  core: Core,
  options: AppOptions & { host?: string; port?: number } = {},
): Promise<RunningServer> {
  const host = options.host ?? core.settings.server.host;
  const server = createServer(createApp(core, options));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? core.settings.server.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  core.setBaseUrl(url);
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
