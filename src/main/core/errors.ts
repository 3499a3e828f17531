import type { ErrorCode } from '../../shared/errors.js';

/** Where a field sits in what core was given: `['scale_factor']`, `['debug', 'cwd']`. */
export type FieldPath = readonly (string | number)[];

export type ErrorOptions = {
  /** The field at fault, relative to the value core was handed (not to the HTTP body). */
  path?: FieldPath | string;
  /** What went wrong underneath, kept for logs and debugging; never shown to the client. */
  cause?: unknown;
  /** Seconds a client should wait before trying again (rate limits, busy resources). */
  retryAfterSeconds?: number;
};

/**
 * A failure the server maps to an HTTP status through its code; core never picks statuses.
 * Its path is relative to what core was given: the server, which knows where that value sits in
 * the request (`action.`, `actions.3.`), prefixes it before answering.
 */
export class BenchtopError extends Error {
  readonly path: FieldPath;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BenchtopError';
    this.path = typeof options.path === 'string' ? splitPath(options.path) : (options.path ?? []);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The field as the contract's `param`: `actions.3.scale_factor`, or undefined. */
  get param(): string | undefined {
    return this.path.length > 0 ? this.path.join('.') : undefined;
  }

  /** The same error about the field as seen from further out: `prefix` + its own path. */
  at(prefix: FieldPath): BenchtopError {
    if (prefix.length === 0) return this;
    return new BenchtopError(this.code, this.message, {
      path: [...prefix, ...this.path],
      cause: this.cause,
      retryAfterSeconds: this.retryAfterSeconds,
    });
  }

  /** The same error with its path replaced (the value was given under another name). */
  renamed(map: (path: FieldPath) => FieldPath): BenchtopError {
    return new BenchtopError(this.code, this.message, {
      path: map(this.path),
      cause: this.cause,
      retryAfterSeconds: this.retryAfterSeconds,
    });
  }
}

function splitPath(path: string): FieldPath {
  return path === ''
    ? []
    : path.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

export const invalidRequest = (message: string, path?: FieldPath | string) =>
  new BenchtopError('invalid_request', message, { path });
export const notFound = (message: string, path?: FieldPath | string) =>
  new BenchtopError('not_found', message, { path });
export const unavailable = (message: string, cause?: unknown) =>
  new BenchtopError('unavailable', message, { retryAfterSeconds: 5, cause });

/**
 * An action that ran and failed because of the computer's state (a navigation error, a closed
 * tab): reported as a 200 ActionResult with status "error", never as an HTTP error.
 */
export class ActionFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ActionFailure';
  }
}
