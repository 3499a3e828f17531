import type { Response } from 'express';
import type { ErrorBody } from '../../shared/errors.js';
import { heartbeatMsOf } from './sse.js';

type Kept = {
  stop: () => void;
  /** The route's answer for an error thrown once the status line is out. */
  late: (error: ErrorBody) => unknown;
};

/**
 * Keeps the request of a JSON answer that may be slow alive: an action held for a person, a long
 * wait or shell command. The SDKs give up on a request that sends nothing for their timeout
 * (60 s) and send it again, while a person may take up to approvals.timeout_seconds to decide
 * and a command up to its timeout_seconds to end. After one heartbeat with no answer, the status
 * line and headers go out (200, JSON) and a space follows every heartbeat: whitespace before a
 * JSON value leaves it the same value for every JSON parser, and each byte restarts the client's
 * read timeout. `late` shapes an error thrown after that as the route's own answer, since its
 * status can no longer say it.
 */
export function keepWaiting(res: Response, late: Kept['late']): void {
  if (res.locals.kept || res.headersSent) return;
  const timer = setInterval(() => {
    if (res.writableEnded) return;
    if (!res.headersSent) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    }
    res.write(' ');
  }, heartbeatMsOf(res.req));
  timer.unref();
  const stop = () => clearInterval(timer);
  res.once('close', stop);
  res.locals.kept = { stop, late } satisfies Kept;
}

/** Ends an answer that keepWaiting already started sending; false when it did not. */
export function endKept(res: Response, answer: unknown): boolean {
  const kept = res.locals.kept as Kept | undefined;
  if (!kept || !res.headersSent) return false;
  kept.stop();
  res.end(JSON.stringify(answer));
  return true;
}

/** Ends a started answer with an error in the route's own shape; false when none was started. */
export function endKeptWithError(res: Response, error: ErrorBody): boolean {
  const kept = res.locals.kept as Kept | undefined;
  return kept !== undefined && endKept(res, kept.late(error));
}

/** Whether keepWaiting already sent the status line (an error must then end the answer itself). */
export function isKept(res: Response): boolean {
  return res.locals.kept !== undefined && res.headersSent;
}
