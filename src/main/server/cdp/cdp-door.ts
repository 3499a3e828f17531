import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import type { Core } from '../../core/create-core.js';
import { BenchtopError } from '../../core/errors.js';
import { HEARTBEAT_MS } from '../sse.js';
import { checkHostAndOrigin, textOf, webSocketDoor, type UpgradeEndpoint } from '../upgrades.js';
import { answeredId, screenClientMessage } from './cdp-messages.js';

type CdpDoor = ReturnType<Core['computers']['cdpDoor']>;

const PATH = /^\/cdp\/([^/]+)\/?$/;
const MIB = 1024 * 1024;
/** Beyond this much unsent one way, the other side is not read until it has drained. */
const HIGH_WATER = 8 * MIB;

/**
 * /cdp/{id}?token=… (docs/API.md §16): a WebSocket into the Chromium of a computer created with
 * cdp. Everything is decided at the upgrade (Host and Origin as for every request, then the
 * token): a refused client gets a status line and the contract's error body, never a WebSocket.
 * Accepted, each client gets its own connection to the browser, and frames pass both ways,
 * checked on the way in (cdp-messages.ts). URLs are never logged: they carry the token.
 */
export function cdpEndpoint(
  core: Core,
  log: (message: string) => void,
  heartbeatMs = HEARTBEAT_MS,
): UpgradeEndpoint {
  return webSocketDoor({
    what: 'CDP',
    log,
    heartbeatMs,
    admit: (req) => admit(core, req),
    serve: bridge,
  });
}

/** The computer a request may attach to, or the BenchtopError that refuses it. */
function admit(core: Core, req: IncomingMessage): CdpDoor {
  const url = new URL(req.url ?? '/', 'http://benchtop');
  const match = PATH.exec(url.pathname);
  if (!match) {
    throw new BenchtopError(
      'not_found',
      `no WebSocket endpoint at ${url.pathname}; a computer's WebSocket is /computers/{id}/ws, and CDP is served at /cdp/{computer id} (the cdp_url of a computer created with "cdp": true)`,
    );
  }
  checkHostAndOrigin(core, req);
  let id: string;
  try {
    id = decodeURIComponent(match[1]!);
  } catch {
    throw new BenchtopError('invalid_request', 'the URL is not valid percent-encoded UTF-8');
  }
  const ip = req.socket.remoteAddress ?? 'unknown';
  try {
    return core.computers.cdpDoor(id, url.searchParams.get('token') ?? undefined);
  } catch (error) {
    if (!(error instanceof BenchtopError) || error.code !== 'unauthorized') throw error;
    // Token guesses count as failed authentications, as wrong API keys do.
    const blocked = core.guards.failures.blockedFor(ip);
    if (blocked > 0) {
      throw new BenchtopError(
        'ip_blocked',
        `too many failed authentications from ${ip}; try again in ${Math.ceil(blocked / 60)} min or lift the block with \`benchtop ip-blocks lift ${ip}\``,
        { retryAfterSeconds: blocked },
      );
    }
    core.guards.failures.record(ip);
    throw error;
  }
}

/** Frames both ways between a client and the computer's browser, until either side or the computer ends. */
function bridge(client: WebSocket, door: CdpDoor): void {
  const browser = new WebSocket(door.browserUrl, {
    perMessageDeflate: false,
    maxPayload: 256 * MIB,
  });
  const waiting: string[] = [];
  /** Commands sent and not answered yet: the computer is busy until each is. */
  const running = new Map<number, () => void>();
  const answered = (id: number) => {
    running.get(id)?.();
    running.delete(id);
  };
  const end = (code: number, reason: string) => {
    if (client.readyState === WebSocket.OPEN) client.close(code, reason);
    else client.terminate();
    browser.terminate();
  };
  const onEnded = () => end(1001, 'the computer ended');
  if (door.ended.aborted) return onEnded();
  door.ended.addEventListener('abort', onEnded, { once: true });
  client.on('message', (data) => {
    door.touch();
    const screened = screenClientMessage(textOf(data), door.downloadsDir);
    if ('reply' in screened) return relay(client, screened.reply, browser);
    if (screened.method === 'Target.createTarget') door.tabOpening();
    answered(screened.id);
    door.busyUntil(new Promise<void>((resolve) => running.set(screened.id, resolve)));
    if (browser.readyState === WebSocket.OPEN) relay(browser, screened.forward, client);
    else waiting.push(screened.forward);
  });
  browser.on('open', () => {
    for (const message of waiting.splice(0)) relay(browser, message, client);
  });
  browser.on('message', (data) => {
    const id = Buffer.isBuffer(data) ? answeredId(data) : undefined;
    if (id !== undefined) answered(id);
    relay(client, data, browser);
  });
  browser.on('close', () => end(1001, "the computer's browser closed"));
  browser.on('error', () => end(1011, "the computer's browser could not be reached"));
  client.on('error', () => {});
  client.on('close', () => {
    door.ended.removeEventListener('abort', onEnded);
    for (const id of [...running.keys()]) answered(id);
    browser.terminate();
  });
}

/** Sends as text (CDP is JSON); a side that outruns the other is paused until it drains. */
function relay(to: WebSocket, data: RawData | string, from: WebSocket): void {
  if (to.readyState !== WebSocket.OPEN) return;
  to.send(data, { binary: false }, () => {
    if (from.isPaused && to.bufferedAmount < HIGH_WATER) from.resume();
  });
  if (to.bufferedAmount > HIGH_WATER && !from.isPaused) from.pause();
}
