import type { RequestHandler } from 'express';
import type { KeyStore } from '../core/store/key-store.js';
import { sendError } from './errors.js';

/** Every route but the public ones needs `Authorization: Bearer <key>`. */
export function requireKey(keys: KeyStore, isPublic: (path: string) => boolean): RequestHandler {
  return (req, res, next) => {
    if (isPublic(req.path)) return next();
    const header = req.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) {
      return sendError(
        res,
        'unauthorized',
        'missing "Authorization: Bearer <key>" header; create a key with `benchtop keys create`',
      );
    }
    const principal = keys.verify(match[1]!);
    if (!principal)
      return sendError(
        res,
        'unauthorized',
        'unknown or revoked API key; create one with `benchtop keys create`',
      );
    res.locals.principal = principal;
    next();
  };
}
