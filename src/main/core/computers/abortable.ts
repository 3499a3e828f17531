import { ActionFailure } from '../errors.js';

/**
 * `work`, unless `signal` aborts first: then an ActionFailure saying `what` was stopped, and
 * `stop` is called to end the work itself (its own outcome is then ignored).
 */
export function abortable<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  what: string,
  stop?: () => void,
): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => {});
      stop?.();
      reject(new ActionFailure(`${what} was cut short: ${stoppedBecause(signal)}`));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Why a signal aborted, for messages: its reason's message, else that it was cancelled. */
export function stoppedBecause(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message)
    return reason.message;
  return 'its request was cancelled';
}
