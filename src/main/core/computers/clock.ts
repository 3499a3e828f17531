/** Time as the registry and its computers see it; tests pass a fake one. */
export type Clock = {
  now(): number;
  /** Calls `run` after `ms` without keeping the process alive; returns the cancel. */
  schedule(run: () => void, ms: number): () => void;
};

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(run, ms) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
