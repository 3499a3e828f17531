/** How long closing Benchtop may take (every computer ended) before the process gives up on it. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/** A close that says which part it is closing, as each part's close begins. */
export type StepwiseClose = (onStep: (part: string) => void) => Promise<void>;

/**
 * Runs `close` and calls `done` once: with 0 when it finished, or 1 when it failed or hangs past
 * the deadline, saying why: for a hang, the part it was still closing. A close that ends after
 * the deadline changes nothing.
 */
export function closeWithin(
  close: StepwiseClose,
  done: (code: number) => void,
  log: (message: string) => void,
  deadlineMs = SHUTDOWN_DEADLINE_MS,
): void {
  let part: string | undefined;
  let settled = false;
  const settle = (code: number, message?: string) => {
    if (settled) return;
    settled = true;
    clearTimeout(deadline);
    if (message) log(message);
    done(code);
  };
  const deadline = setTimeout(() => {
    const where = part ? ` (still closing ${part})` : '';
    settle(1, `closing took longer than ${deadlineMs / 1000} s${where}; exiting`);
  }, deadlineMs);
  deadline.unref();
  close((next) => (part = next)).then(
    () => settle(0),
    (error: unknown) => settle(1, `error while closing: ${String(error)}`),
  );
}
