import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { ExecuteBody, type ActionResult } from '../../shared/actions.js';
import { IdParams } from '../../shared/contract/route.js';
import type { ComputerSession } from '../core/computers/computer-session.js';
import type { Core } from '../core/create-core.js';
import { BenchtopError } from '../core/errors.js';
import type { Principal } from '../core/store/key-store.js';
import { authenticate, takeRequest } from './auth.js';
import { describeClient } from './client-sdk.js';
import { finalStatus } from './handlers/streams.handlers.js';
import { HEARTBEAT_MS } from './sse.js';
import { parseParams } from './register-routes.js';
import { checkHostAndOrigin, textOf, webSocketDoor, type UpgradeEndpoint } from './upgrades.js';
import { parseWith } from './validate.js';

/** /computers/{id}/ws: the path of a computer's WebSocket. */
export const COMPUTER_SOCKET_PATH = /^\/computers\/([^/]+)\/ws\/?$/;
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/**
 * Bytes a client may leave unread before its socket is cut off, as for an events stream: without
 * a bound, one client that stops reading while a command prints hundreds of megabytes would make
 * the server hold all of them.
 */
const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

/** What an upgrade that was let in knows. */
type Admitted = {
  principal: Principal;
  /** Checked again for every message: a revoked key stops at once. */
  key: string;
  session: ComputerSession;
  requester: string;
};

/** What a client sends: an action as /execute takes it (`{action}` or bare), and its own `id`. */
type Sent = { id?: string | number; body: unknown; badId?: true };

/**
 * GET /computers/{id}/ws (docs/API.md): one WebSocket per client onto a computer, both ways.
 * The server sends every event of the computer's stream (what GET /computers/{id}/events sends
 * as SSE data) and the answer to each action the client sends, `{"type": "action_result", "id",
 * …ActionResult}`; the client sends actions as /execute takes them, with an `id` of its choosing.
 * Actions run as if sent to /execute by the same key: the same queue, gates and recording, each
 * one request of the organization's rate. Bad input is an `error` message, and the socket stays
 * open; it closes when the computer ends (after its status event) or the key is revoked.
 */
export function computerSocketEndpoint(
  core: Core,
  log: (message: string) => void,
  heartbeatMs = HEARTBEAT_MS,
): UpgradeEndpoint {
  return webSocketDoor({
    what: 'computer WebSocket',
    log,
    heartbeatMs,
    maxPayload: MAX_MESSAGE_BYTES,
    admit: (req) => admit(core, req),
    serve: (client, admitted) => serve(core, client, admitted, log),
  });
}

function admit(core: Core, req: IncomingMessage): Admitted {
  const url = new URL(req.url ?? '/', 'http://benchtop');
  checkHostAndOrigin(core, req);
  const ip = req.socket.remoteAddress ?? 'unknown';
  const principal = authenticate(core.keys, core.guards, ip, req.headers.authorization);
  const key = req.headers.authorization!.trim().split(/\s+/)[1]!;
  let id = '';
  try {
    id = decodeURIComponent(COMPUTER_SOCKET_PATH.exec(url.pathname)?.[1] ?? '');
  } catch {
    // Not an id Benchtop hands out: not found below.
  }
  // As a route's path is read: an id Benchtop cannot have handed out is not found.
  const { id: computerId } = parseParams(IdParams, { id }) as { id: string };
  const session = core.computers.get(principal.org, computerId);
  return { principal, key, session, requester: describeClient(req.headers, principal) };
}

function serve(core: Core, client: WebSocket, admitted: Admitted, log: (message: string) => void) {
  const { session } = admitted;
  const send = (message: object) => {
    if (client.readyState !== WebSocket.OPEN) return;
    // Nothing more can reach a client before what it left unread, a close frame neither.
    if (client.bufferedAmount > MAX_UNSENT_BYTES) return client.terminate();
    client.send(JSON.stringify(message));
  };
  const ended = () => {
    if (client.readyState === WebSocket.OPEN) client.close(1000, 'the computer ended');
  };
  if (session.status === 'terminated') {
    send(finalStatus(session));
    return ended();
  }
  // Actions still queued or waiting for a person when the client goes are left, as when an HTTP
  // client stops waiting: they do not run unless sent again.
  const gone = new AbortController();
  const unsubscribe = core.events.subscribe(session.id, (event) => {
    send(event);
    if (event.type === 'status') ended();
  });
  client.on('message', (data: RawData) => {
    const sent = read(data);
    act(core, admitted, sent, gone.signal).then(
      (result) => send({ type: 'action_result', ...idOf(sent), ...result }),
      (error: unknown) => {
        if (!(error instanceof BenchtopError)) {
          log(`computer WebSocket action failed: ${(error as Error)?.stack ?? String(error)}`);
          error = new BenchtopError('internal', 'internal error; see the Benchtop log');
        }
        const { code, message, param, retryAfterSeconds } = error as BenchtopError;
        send({
          type: 'error',
          ...idOf(sent),
          code,
          message,
          ...(param && { param }),
          ...(retryAfterSeconds !== undefined && { retry_after_seconds: retryAfterSeconds }),
        });
        if (code === 'unauthorized') client.close(1008, 'the API key was revoked');
      },
    );
  });
  client.on('error', () => {});
  client.on('close', () => {
    unsubscribe();
    gone.abort();
  });
}

const idOf = (sent: Sent) => (sent.id === undefined ? {} : { id: sent.id });

/** A message as the client meant it; what is not JSON becomes a body that fails validation. */
function read(data: RawData): Sent {
  let message: unknown;
  try {
    message = JSON.parse(textOf(data));
  } catch {
    return { body: undefined };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { body: message };
  }
  const { id, ...body } = message as Record<string, unknown>;
  if (id === undefined || typeof id === 'string' || typeof id === 'number') return { id, body };
  return { body, badId: true };
}

async function act(
  core: Core,
  admitted: Admitted,
  sent: Sent,
  gone: AbortSignal,
): Promise<ActionResult> {
  const { principal, key, session, requester } = admitted;
  if (core.keys.verify(key)?.org !== principal.org) {
    throw new BenchtopError(
      'unauthorized',
      'the API key this WebSocket was opened with has been revoked; open it again with a valid key',
    );
  }
  takeRequest(core.guards, principal.org);
  if (sent.body === undefined) {
    throw new BenchtopError(
      'invalid_request',
      'each message is one JSON object: an action such as {"type": "click", "x": 10, "y": 20}, or {"action": {…}}, with an optional "id" the answer repeats',
    );
  }
  if (sent.badId) {
    throw new BenchtopError('invalid_request', 'id must be a string or a number', { path: ['id'] });
  }
  const body = parseWith(ExecuteBody, sent.body);
  const wrapped = 'action' in body;
  return core.computers
    .act(principal.org, session.id, wrapped ? body.action : body, {
      retried: false,
      requester,
      signal: gone,
    })
    .catch((error: unknown) => {
      throw error instanceof BenchtopError && wrapped ? error.at(['action']) : error;
    });
}
