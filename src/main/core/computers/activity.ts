/**
 * Between actions (options.betweenActions): how long the screen must be free of actions before
 * the capture runs again, how long one action may run before it is captured all the same (a
 * navigation shows its page loading), and the longest stretch of back-to-back actions left
 * uncaptured.
 */
const QUIET_MS = 100;
const LONG_ACTION_MS = 300;
const MAX_GAP_MS = 1000;

/** What keeps a computer busy: an action, or a screenshot (which is itself a look at the screen). */
export type Work = 'action' | 'screenshot';

export type ActivityEvent =
  | { type: 'busy'; work: Work }
  | { type: 'idle' }
  /** A screenshot of what the capture shows (the main tab), taken just now. */
  | { type: 'shown'; png: Buffer };

/**
 * Whether a computer is performing an action right now, for the work that should keep out of
 * an action's way (a recorder's capture, which makes Chromium encode a frame for every change).
 */
export class Activity {
  private running = 0;
  private readonly listeners = new Set<(event: ActivityEvent) => void>();

  get busy(): boolean {
    return this.running > 0;
  }

  /** Runs an action, busy meanwhile (actions of one computer may overlap: tabs, takeovers). */
  async around<T>(work: () => Promise<T>, kind: Work = 'action'): Promise<T> {
    if (this.running++ === 0) this.emit({ type: 'busy', work: kind });
    try {
      return await work();
    } finally {
      if (--this.running === 0) this.emit({ type: 'idle' });
    }
  }

  /** A screenshot showed the screen as the capture sees it: the capture may take it as a frame. */
  shown(png: Buffer): void {
    this.emit({ type: 'shown', png });
  }

  /** Calls the listener each time the computer becomes busy or idle; returns the unsubscribe. */
  subscribe(listener: (event: ActivityEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: ActivityEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/**
 * Tells `run` when a capture between actions should run: not while an action is performed,
 * again once none has been for QUIET_MS, during an action that lasts longer than LONG_ACTION_MS,
 * and between two actions when the last capture is older than MAX_GAP_MS.
 *
 * With `onShown`, a screenshot of what the capture shows is given to it as its frame: it counts
 * as a capture (an agent that looks at the screen before each action has each outcome captured
 * that way, and a stream of such steps needs no capture between them), and a screenshot that
 * lasts long is not captured while it runs. The capture then runs again `afterLook`: the screen
 * is as that screenshot showed it, so far.
 */
export function keepOutOfActions(
  activity: Activity,
  run: (run: boolean, afterLook?: boolean) => void,
  onShown?: (png: Buffer) => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let pausedAt: number | undefined;
  /** Nothing was done to the screen since the last screenshot handed over. */
  let looked = false;
  const later = (ms: number, then: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(then, ms);
    timer.unref();
  };
  const resume = () => {
    clearTimeout(timer);
    pausedAt = undefined;
    run(true, looked);
  };
  const unsubscribe = activity.subscribe((event) => {
    if (event.type === 'shown') {
      if (!onShown) return;
      // The screen is captured as of now: the longest gap counts from here.
      if (pausedAt !== undefined) pausedAt = Date.now();
      looked = true;
      onShown(event.png);
    } else if (event.type === 'busy') {
      pausedAt ??= Date.now();
      if (event.work === 'action') looked = false;
      run(false);
      if (event.work === 'screenshot' && onShown) clearTimeout(timer);
      else later(LONG_ACTION_MS, resume);
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
