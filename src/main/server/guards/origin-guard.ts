import type { RequestHandler } from 'express';
import { sendError } from '../errors.js';

export type OriginSettings = { allowed_hosts: string[]; cors_origins: string[] };

/** The hostname of a Host header: "127.0.0.1:4422" → "127.0.0.1", "[::1]:80" → "::1". */
export function hostnameOf(host: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return bracketed[1]!.toLowerCase();
  return host.replace(/:\d+$/, '').toLowerCase();
}

/**
 * DNS-rebinding guard and closed CORS: the Host header must name this server
 * (a configured name, or the address it listens on), and a browser's cross-origin request is
 * refused unless its origin is configured. Same-origin requests (the UI at /ui/) pass.
 */
export function originGuard(
  settings: () => OriginSettings,
  listeningHost: () => string,
): RequestHandler {
  return (req, res, next) => {
    const { allowed_hosts, cors_origins } = settings();
    const host = req.headers.host ?? '';
    const name = hostnameOf(host);
    const allowed = new Set(
      [...allowed_hosts, hostnameOf(listeningHost())].map((h) => h.toLowerCase()),
    );
    if (!allowed.has(name)) {
      return sendError(
        res,
        'forbidden',
        `Host "${host}" is not one of this server's names; add it to server.allowed_hosts if you reach Benchtop through it`,
      );
    }
    const origin = req.headers.origin;
    if (!origin || origin === `${req.protocol}://${host}`) return next();
    if (!cors_origins.includes(origin)) {
      return sendError(
        res,
        'forbidden',
        `cross-origin requests from ${origin} are refused; add it to server.cors_origins to allow them`,
      );
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE');
    res.setHeader(
      'Access-Control-Allow-Headers',
      req.headers['access-control-request-headers'] ?? 'authorization, content-type',
    );
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
