/**
 * Between actions (options.betweenActions): how long the screen must be free of actions before
 * the capture runs again, how long one action may run before it is captured all the same (a
 * navigation shows its page loading), and the longest stretch of back-to-back actions left
 * uncaptured.
 */
const QUIET_MS = 100;
const LONG_ACTION_MS = 300;
const MAX_GAP_MS = 1000;

/**
 * Whether a computer is performing an action right now, for the work that should keep out of
 * an action's way (a recorder's capture, which makes Chromium encode a frame for every change).
 */
export class Activity {
  private running = 0;
  private readonly listeners = new Set<(busy: boolean) => void>();

  get busy(): boolean {
    return this.running > 0;
  }

  /** Runs an action, busy meanwhile (actions of one computer may overlap: tabs, takeovers). */
  async around<T>(work: () => Promise<T>): Promise<T> {
    if (this.running++ === 0) this.emit(true);
    try {
      return await work();
    } finally {
      if (--this.running === 0) this.emit(false);
    }
  }

  /** Calls the listener each time the computer becomes busy or idle; returns the unsubscribe. */
  subscribe(listener: (busy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(busy: boolean): void {
    for (const listener of this.listeners) listener(busy);
  }
}

/**
 * Tells `run` when a capture between actions should run: not while an action is performed,
 * again once none has been for QUIET_MS, during an action that lasts longer than LONG_ACTION_MS,
 * and between two actions when the last capture is older than MAX_GAP_MS.
 */
export function keepOutOfActions(activity: Activity, run: (run: boolean) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let pausedAt: number | undefined;
  const later = (ms: number, then: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(then, ms);
    timer.unref();
  };
  const resume = () => {
    clearTimeout(timer);
    pausedAt = undefined;
    run(true);
  };
  const unsubscribe = activity.subscribe((busy) => {
    if (busy) {
      pausedAt ??= Date.now();
      run(false);
      later(LONG_ACTION_MS, resume);
    } else if (pausedAt !== undefined && Date.now() - pausedAt >= MAX_GAP_MS) {
      resume();
    } else {
      later(QUIET_MS, resume);
    }
  });
  return () => {
    clearTimeout(timer);
    unsubscribe();
  };
}
