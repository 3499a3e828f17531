import type { RequestHandler } from 'express';
import type { KeyStore } from '../core/store/key-store.js';
import { sendError } from './errors.js';
import type { AuthFailures } from '../core/guards/auth-failures.js';
import type { TokenBuckets } from '../core/guards/token-buckets.js';

export type AuthGuards = { failures: AuthFailures; buckets: TokenBuckets };

/**
 * Every route mounted after this needs `Authorization: Bearer <key>`. An address with too many
 * failed attempts is blocked for requests without a valid key only: guessing stops (a wrong key
 * gets the same 403 as no key, so a guess learns nothing), while the machine's owner, whose
 * clients share the address with whatever failed (a stray script, a web page), keeps working.
 * Each organization has its own request rate, however many keys it has.
 */
export function requireKey(keys: KeyStore, guards: AuthGuards): RequestHandler {
  return (req, res, next) => {
    const ip = req.socket.remoteAddress ?? 'unknown';
    const header = req.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    const principal = match ? keys.verify(match[1]!) : undefined;
    if (!principal) {
      const blocked = guards.failures.blockedFor(ip);
      if (blocked > 0) {
        return sendError(
          res,
          'ip_blocked',
          `too many failed authentications from ${ip}, so requests from it need a valid key; try again in ${Math.ceil(blocked / 60)} min or lift the block in the Benchtop window or with \`benchtop ip-blocks lift ${ip}\``,
          undefined,
          blocked,
        );
      }
      guards.failures.record(ip);
      return sendError(
        res,
        'unauthorized',
        match
          ? 'unknown or revoked API key; create one with `benchtop keys create`'
          : 'missing "Authorization: Bearer <key>" header; create a key with `benchtop keys create`',
      );
    }
    const taken = guards.buckets.take(principal.org);
    if (!taken.ok) {
      return sendError(
        res,
        'rate_limited',
        `too many requests for organization "${principal.org}" (all its keys share one rate); slow down or raise limits.requests_per_second and limits.burst`,
        undefined,
        taken.retryAfterSeconds,
      );
    }
    res.locals.principal = principal;
    next();
  };
}
