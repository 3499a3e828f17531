import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConfigError, listensEverywhere } from '../core/config.js';
import { newId } from '../core/ids.js';
import type { Core } from '../core/create-core.js';
import { COMPUTER_SOCKET_PATH, computerSocketEndpoint } from './computer-socket.js';
import { cdpEndpoint } from './cdp/cdp-door.js';
import { createApp, type AppOptions } from './create-app.js';

export type RunningServer = { url: string; port: number; close(): Promise<void> };

/**
 * A request Node's HTTP parser cannot read (broken framing, oversized headers) never reaches the
 * app; it still gets the contract's error body instead of a bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    message: tooLarge
      ? 'the request headers are too large'
      : 'the request is not valid HTTP/1.1 (a body needs Content-Length or chunked encoding)',
    code: tooLarge ? 'payload_too_large' : 'invalid_request',
    request_id: newId('req'),
  });
  socket.end(
    `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

const CHOOSE_PORT = 'choose another with --port, BENCHTOP_PORT or server.port (0 picks a free one)';

/** Why the server cannot listen, in words that say which setting to change. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `port ${port} of ${host}`;
  const message =
    error.code === 'EADDRINUSE'
      ? `${where} is in use by another program (another Benchtop?); ${CHOOSE_PORT}`
      : error.code === 'EACCES'
        ? `not allowed to listen on ${where} (ports below 1024 need privileges); ${CHOOSE_PORT}`
        : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
          ? `${host} is not an address of this machine; set --host, BENCHTOP_HOST or server.host to one (127.0.0.1 by default)`
          : `cannot listen on ${where}: ${error.message}`;
  return new ConfigError(message, { cause: error });
}

/**
 * The URL this machine's clients reach a server on `host` at. A server listening on every
 * address (0.0.0.0, ::) is reached at 127.0.0.1: a URL naming the wildcard does not open in every
 * browser nor on every system (Windows refuses to connect to 0.0.0.0). Other machines use their
 * own name for it, which server.allowed_hosts must list.
 */
export function serverUrl(host: string, port: number): string {
  const reached = listensEverywhere(host) ? '127.0.0.1' : host;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}

/** Listens (port 0 picks a free one) and tells core its URL. close() ends open connections too. */
export async function startServer(
  core: Core,
  options: AppOptions & { host?: string; port?: number } = {},
): Promise<RunningServer> {
  const host = options.host ?? core.settings.server.host;
  const app = createApp(core, options);
  const server = createServer(app.app);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  const log = options.log ?? ((message: string) => console.error(message));
  const cdp = cdpEndpoint(core, log, options.sse?.heartbeatMs);
  const computerSocket = computerSocketEndpoint(core, log, options.sse?.heartbeatMs);
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://benchtop').pathname;
    const endpoint = COMPUTER_SOCKET_PATH.test(path) ? computerSocket : cdp;
    endpoint.upgrade(req, socket, head);
  });
  const wanted = options.port ?? core.settings.server.port;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(listenError(error, host, wanted)),
    );
    server.listen(wanted, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = serverUrl(host, port);
  core.setBaseUrl(url);
  return {
    url,
    port,
    close: async () => {
      await app.close();
      await new Promise<void>((resolve) => {
        // Upgraded sockets are no longer the HTTP server's to close.
        cdp.close();
        computerSocket.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
