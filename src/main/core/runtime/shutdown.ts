/** How long closing Benchtop may take (every computer ended) before the process gives up on it. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/** A close that says which part it is closing, as each part's close begins. */
export type StepwiseClose = (onStep: (part: string) => void) => Promise<void>;

/**
 * Runs `close` and calls `done` with 0 once it finished, or 1 when it failed or hangs past the
 * deadline, saying why: for a hang, the part it was still closing.
 */
export function closeWithin(
  close: StepwiseClose,
  done: (code: number) => void,
  log: (message: string) => void,
  deadlineMs = SHUTDOWN_DEADLINE_MS,
): void {
  let part: string | undefined;
  const deadline = setTimeout(() => {
    const where = part ? ` (still closing ${part})` : '';
    log(`closing took longer than ${deadlineMs / 1000} s${where}; exiting`);
    done(1);
  }, deadlineMs);
  deadline.unref();
  close((next) => (part = next)).then(
    () => {
      clearTimeout(deadline);
      done(0);
    },
    (error: unknown) => {
      clearTimeout(deadline);
      log(`error while closing: ${String(error)}`);
      done(1);
    },
  );
}
