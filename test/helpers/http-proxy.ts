import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HttpProxy = {
  url: string;
  /** Request lines the proxy forwarded, e.g. "GET http://127.0.0.1:1234/tab.html". */
  log: string[];
  close(): Promise<void>;
};

/** A small forwarding HTTP proxy on 127.0.0.1 for plain-http targets, optionally with basic auth. */
export async function startHttpProxy(credentials?: {
  username: string;
  password: string;
}): Promise<HttpProxy> {
  const log: string[] = [];
  const expected =
    credentials &&
    `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    if (expected && req.headers['proxy-authorization'] !== expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    log.push(`${req.method} ${req.url}`);
    const target = new URL(req.url!);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
