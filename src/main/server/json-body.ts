import type { RequestHandler } from 'express';
import { BenchtopError, invalidRequest } from '../core/errors.js';

/**
 * Reads a JSON body whatever its Content-Type says (the SDKs send JSON, sometimes an empty body
 * with a JSON content type, sometimes nothing). Leaner than body-parser, which matters on the
 * hot path of every action: no charset negotiation, no decompression, one Buffer.concat.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  return (req, _res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (!req.headers['transfer-encoding'] && !(declared > 0)) return next();
    if (declared > limitBytes) return next(tooLarge(limitBytes));
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes && !failed) {
        failed = true;
        next(tooLarge(limitBytes));
      }
      if (!failed) chunks.push(chunk);
    });
    req.on('error', (error) => {
      if (!failed) next(invalidRequest(`the body could not be read: ${error.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
      if (text.trim() === '') return next();
      try {
        req.body = JSON.parse(text) as unknown;
      } catch {
        return next(invalidRequest('body is not valid JSON'));
      }
      next();
    });
  };
}

function tooLarge(limitBytes: number): BenchtopError {
  return new BenchtopError(
    'payload_too_large',
    `the body is larger than ${limitBytes / 1024 / 1024} MiB`,
  );
}
