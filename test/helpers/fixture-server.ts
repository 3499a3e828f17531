import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

const ROOT = join(import.meta.dirname, '..', 'fixtures');
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript',
  css: 'text/css',
};

export type FixtureServer = { url: string; close(): Promise<void> };

/** Serves test/fixtures over HTTP on 127.0.0.1 and a free port. */
export async function startFixtureServer(): Promise<FixtureServer> {
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url!, 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    readFile(join(ROOT, path)).then(
      (data) => {
        res.writeHead(200, {
          'content-type': TYPES[path.split('.').pop()!] ?? 'application/octet-stream',
        });
        res.end(data);
      },
      () => {
        res.writeHead(404).end('not found');
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
