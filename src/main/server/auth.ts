import type { RequestHandler } from 'express';
import type { KeyStore, Principal } from '../core/store/key-store.js';
import { BenchtopError } from '../core/errors.js';
import { sendError } from './errors.js';
import type { AuthFailures } from '../core/guards/auth-failures.js';
import type { TokenBuckets } from '../core/guards/token-buckets.js';

export type AuthGuards = { failures: AuthFailures; buckets: TokenBuckets };

/**
 * The organization an `Authorization: Bearer <key>` header speaks for, or the BenchtopError that
 * refuses it. An address with too many failed attempts is blocked for requests without a valid
 * key only: guessing stops (a wrong key gets the same 403 as no key, so a guess learns nothing),
 * while the machine's owner, whose clients share the address with whatever failed (a stray
 * script, a web page), keeps working. Each organization has its own request rate, however many
 * keys it has; an accepted request takes one from it.
 */
export function authenticate(
  keys: KeyStore,
  guards: AuthGuards,
  ip: string,
  authorization: string | undefined,
): Principal {
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  const principal = match ? keys.verify(match[1]!) : undefined;
  if (!principal) {
    const blocked = guards.failures.blockedFor(ip);
    if (blocked > 0) {
      throw new BenchtopError(
        'ip_blocked',
        `too many failed authentications from ${ip}, so requests from it need a valid key; try again in ${Math.ceil(blocked / 60)} min or lift the block in the Benchtop window or with \`benchtop ip-blocks lift ${ip}\``,
        { retryAfterSeconds: blocked },
      );
    }
    guards.failures.record(ip);
    throw new BenchtopError(
      'unauthorized',
      match
        ? 'unknown or revoked API key; create one with `benchtop keys create`'
        : 'missing "Authorization: Bearer <key>" header; create a key with `benchtop keys create`',
    );
  }
  takeRequest(guards, principal.org);
  return principal;
}

/** One request of the organization's rate, or the rate_limited error. */
export function takeRequest(guards: AuthGuards, org: string): void {
  const taken = guards.buckets.take(org);
  if (!taken.ok) {
    throw new BenchtopError(
      'rate_limited',
      `too many requests for organization "${org}" (all its keys share one rate); slow down or raise limits.requests_per_second and limits.burst`,
      { retryAfterSeconds: taken.retryAfterSeconds },
    );
  }
}

/** Every route mounted after this needs a key (see authenticate). */
export function requireKey(keys: KeyStore, guards: AuthGuards): RequestHandler {
  return (req, res, next) => {
    try {
      res.locals.principal = authenticate(
        keys,
        guards,
        req.socket.remoteAddress ?? 'unknown',
        req.headers.authorization,
      );
    } catch (error) {
      if (!(error instanceof BenchtopError)) throw error;
      return sendError(res, error.code, error.message, undefined, error.retryAfterSeconds);
    }
    next();
  };
}
