import type { ErrorCode } from '../../shared/errors.js';

/** A failure the server maps to an HTTP status through its code; core never picks statuses. */
export class BenchtopError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'BenchtopError';
  }

  /** The same error about another field name (an endpoint whose body is laid out differently). */
  withParam(param: string): BenchtopError {
    return new BenchtopError(this.code, this.message, param, this.retryAfterSeconds);
  }
}

export const invalidRequest = (message: string, param?: string) =>
  new BenchtopError('invalid_request', message, param);
export const notFound = (message: string, param?: string) =>
  new BenchtopError('not_found', message, param);
export const unavailable = (message: string) =>
  new BenchtopError('unavailable', message, undefined, 5);

/**
 * An action that ran and failed because of the computer's state (a navigation error, a closed
 * tab): reported as a 200 ActionResult with status "error", never as an HTTP error.
 */
export class ActionFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ActionFailure';
  }
}
