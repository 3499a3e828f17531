import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.js';
import type { Core } from '../core/create-core.js';
import { BenchtopError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { hostnameOf } from './guards/origin-guard.js';

/** A WebSocket endpoint: the HTTP server's 'upgrade' listener for its paths, and its close. */
export type UpgradeEndpoint = {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every open connection (Benchtop is closing). */
  close(): void;
};

/** The DNS-rebinding guard and closed origins of every HTTP request, for an upgrade too. */
export function checkHostAndOrigin(core: Core, req: IncomingMessage): void {
  const { allowed_hosts, cors_origins } = core.settings.server;
  const host = req.headers.host ?? '';
  const allowed = [...allowed_hosts, hostnameOf(new URL(core.baseUrl).hostname)];
  if (!allowed.map((name) => name.toLowerCase()).includes(hostnameOf(host))) {
    throw new BenchtopError(
      'forbidden',
      `Host "${host}" is not one of this server's names; add it to server.allowed_hosts if you reach Benchtop through it`,
    );
  }
  const origin = req.headers.origin;
  if (origin && origin !== `http://${host}` && !cors_origins.includes(origin)) {
    throw new BenchtopError(
      'forbidden',
      `WebSocket connections from ${origin} are refused; add it to server.cors_origins to allow them`,
    );
  }
}

/**
 * A WebSocket endpoint of the server: each upgrade admitted (or refused with the contract's
 * error), each accepted client served and pinged (keepChecking), every one ended when Benchtop
 * closes. `what` names it in the log.
 */
export function webSocketDoor<T>(door: {
  what: string;
  log: (message: string) => void;
  heartbeatMs: number;
  /** Larger messages close the socket (1009); ws's own bound otherwise. */
  maxPayload?: number;
  admit: (req: IncomingMessage) => T;
  serve: (client: WebSocket, admitted: T) => void;
}): UpgradeEndpoint {
  const sockets = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    ...(door.maxPayload !== undefined && { maxPayload: door.maxPayload }),
  });
  const open = new Set<WebSocket>();
  return {
    upgrade(req, socket, head) {
      const admitted = admitOrRefuse(socket, door.log, door.what, () => door.admit(req));
      if (admitted === undefined) return;
      sockets.handleUpgrade(req, socket, head, (client) => {
        open.add(client);
        client.once('close', () => open.delete(client));
        door.serve(client, admitted);
        keepChecking(client, door.heartbeatMs);
      });
    },
    close() {
      for (const client of open) client.terminate();
      sockets.close();
    },
  };
}

/**
 * Admits an upgrade or answers it: a refused client gets a status line and the contract's error
 * body, never a WebSocket; what admit throws that is not a BenchtopError is logged (never the
 * URL, which may carry a token) and answered as internal.
 */
function admitOrRefuse<T>(
  socket: Duplex,
  log: (message: string) => void,
  what: string,
  admit: () => T,
): T | undefined {
  // A client that goes away during the handshake must not become an uncaught error.
  socket.on('error', () => {});
  try {
    return admit();
  } catch (error) {
    if (error instanceof BenchtopError) refuse(socket, error);
    else {
      log(`${what} upgrade failed: ${(error as Error)?.stack ?? String(error)}`);
      refuse(socket, new BenchtopError('internal', 'internal error; see the Benchtop log'));
    }
    return undefined;
  }
}

function refuse(socket: Duplex, error: BenchtopError): void {
  const status = ERROR_STATUS[error.code as ErrorCode];
  const body: ErrorBody = {
    message: error.message,
    code: error.code,
    ...(error.param && { param: error.param }),
    request_id: newId('req'),
  };
  const text = JSON.stringify(body);
  const retry =
    error.retryAfterSeconds === undefined
      ? ''
      : `retry-after: ${Math.ceil(error.retryAfterSeconds)}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\n${retry}connection: close\r\n\r\n${text}`,
  );
}

/** A message's text, however ws delivered it. */
export function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/**
 * Pings the client every heartbeat; one that has not answered the last ping by the next is gone
 * (a laptop closed, a network dropped without a word) and its socket is ended, with what it held
 * (an events subscription, a connection to the browser). Clients answer pings by themselves (the
 * WebSocket protocol's pong).
 */
function keepChecking(client: WebSocket, heartbeatMs: number): void {
  let answered = true;
  client.on('pong', () => (answered = true));
  const timer = setInterval(() => {
    if (!answered) return client.terminate();
    answered = false;
    client.ping();
  }, heartbeatMs);
  timer.unref();
  client.once('close', () => clearInterval(timer));
}
