import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BenchtopError, notFound } from '../errors.js';
import type { ComputerSession } from './computer-session.js';

/**
 * What a computer created with `cdp: true` lets a CDP client reach: its own Chromium's browser
 * endpoint, behind a per-computer token (docs/API.md §16). The token lives only in memory and in
 * the cdp_url handed to whoever created the computer.
 */
export type CdpAccess = {
  token: string;
  /** The webSocketDebuggerUrl of the computer's Chromium (127.0.0.1, a port Chromium picked). */
  browserUrl: string;
  /** Where downloads a CDP client asks for land: the computer's own folder, never one it names. */
  downloadsDir: string;
  /** Tells the computer a client is opening a page (its recording then sees it from its start). */
  tabOpening: () => void;
  /**
   * Marks the computer busy while a client's command runs, so a recorder's capture keeps out of
   * its way as it does for actions through the API (it had made a client's click 2.3 times slower).
   */
  busyUntil: (done: Promise<unknown>) => void;
};

/** 256 random bits, URL-safe: the token is a query parameter. */
export function newCdpToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Compares in constant time whatever the lengths: digests of equal length are compared, so
 * neither the time nor an early length check tells a guesser how close a token came.
 */
export function cdpTokenMatches(expected: string, given: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

export type CdpSession = ComputerSession & { cdp: CdpAccess };

/**
 * The session a CDP client may attach to with `token`, or why not. Whether a computer exists is
 * no secret (ids are random, and the answer names no organization); its token is, and it is
 * checked before anything about the computer's state is told.
 */
export function checkCdpDoor(
  session: ComputerSession | undefined,
  id: string,
  token: string | undefined,
): CdpSession {
  if (!session) throw notFound(`no computer ${id}`, 'id');
  const { cdp } = session;
  if (!cdp) {
    throw notFound(
      `computer ${id} was created without cdp; create a browser computer with "cdp": true to get a cdp_url`,
      'id',
    );
  }
  if (!token) {
    throw new BenchtopError(
      'unauthorized',
      'missing token: connect to the cdp_url of the computer as given, with its ?token=',
    );
  }
  if (!cdpTokenMatches(cdp.token, token)) {
    throw new BenchtopError(
      'unauthorized',
      `wrong token for computer ${id}: use the cdp_url from POST /computers or GET /computers/{id}`,
    );
  }
  if (session.status !== 'running') {
    const when = new Date(session.terminatedAt!).toISOString();
    throw notFound(`computer ${id} has ended (${session.terminationReason} at ${when})`, 'id');
  }
  return session as CdpSession;
}
