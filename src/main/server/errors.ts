import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.js';
import { BenchtopError } from '../core/errors.js';
import { storageMessage, storageProblem } from '../core/storage-errors.js';
import { endKeptWithError, isKept } from './keep-waiting.js';

export function sendError(
  res: Response,
  code: ErrorCode,
  message: string,
  param?: string,
  retryAfterSeconds?: number,
): void {
  const body: ErrorBody = {
    message,
    code,
    ...(param && { param }),
    request_id: res.locals.requestId as string,
  };
  // An answer already under way (a slow one kept alive) ends with it, in the route's own shape.
  if (endKeptWithError(res, body)) return;
  if (retryAfterSeconds !== undefined) {
    res.setHeader('Retry-After', String(Math.ceil(retryAfterSeconds)));
    res.setHeader('retry-after-ms', String(Math.ceil(retryAfterSeconds * 1000)));
  }
  // The SDKs retry every 429; a full quota stays full, so they are told not to.
  if (code === 'quota_exceeded') res.setHeader('x-should-retry', 'false');
  res.status(ERROR_STATUS[code]).json(body);
}

/** What Node and Express say of a stream whose other end closed. */
const GONE_CODES = new Set(['ECONNABORTED', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

function clientGone(req: Request, error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return req.socket.destroyed && code !== undefined && GONE_CODES.has(code);
}

/** The one place where failures become HTTP statuses and the error body of the contract. */
export function errorMapper(log: (message: string) => void): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    // The client went away (a page closed, a download cancelled) before its answer was whole:
    // nobody to answer, and no failure of Benchtop's to log.
    if (clientGone(req, error)) return;
    if (res.headersSent && !isKept(res)) return next(error);
    if (error instanceof BenchtopError) {
      return sendError(res, error.code, error.message, error.param, error.retryAfterSeconds);
    }
    // Express could not decode a path parameter ("%ED%A0%80" is no UTF-8): the client's URL.
    if (error instanceof URIError || (error as { status?: number })?.status === 400) {
      return sendError(res, 'invalid_request', 'the URL is not valid percent-encoded UTF-8');
    }
    // A data dir that cannot be written (read-only disk, full disk, permissions) is the machine's
    // problem, not a bug: the answer says so, and the log keeps the details.
    const problem = storageProblem(error);
    if (problem) {
      log(`storage error ${res.locals.requestId as string}: ${(error as Error).stack}`);
      return sendError(res, 'unavailable', storageMessage('write to its data dir', problem));
    }
    log(
      `internal error ${res.locals.requestId as string}: ${(error as Error)?.stack ?? String(error)}`,
    );
    return sendError(
      res,
      'internal',
      `internal error (request ${res.locals.requestId as string}); see the Benchtop log`,
    );
  };
}

/**
 * Reads a JSON body whatever its Content-Type says (the SDKs send JSON, sometimes an empty body
 * with a JSON content type, sometimes nothing): a body that is too large or not JSON becomes the
 * contract's error.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, type: () => true, strict: false });
  return (req, res, next) =>
    parse(req, res, (error?: unknown) =>
      next(error === undefined ? undefined : bodyError(error, limitBytes)),
    );
}

function bodyError(error: unknown, limitBytes: number): BenchtopError {
  const { type, message } = error as { type?: string; message?: string };
  if (type === 'entity.too.large') {
    return new BenchtopError(
      'payload_too_large',
      `the body is larger than ${limitBytes / 1024 / 1024} MiB`,
      { cause: error },
    );
  }
  if (type === 'entity.parse.failed') {
    return new BenchtopError('invalid_request', 'body is not valid JSON', { cause: error });
  }
  return new BenchtopError('invalid_request', `the body could not be read: ${message ?? type}`, {
    cause: error,
  });
}
