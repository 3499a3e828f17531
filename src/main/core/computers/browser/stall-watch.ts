/** A change the page told of, not followed by a frame for this long, is a stalled screencast. */
const STALL_MS = 1000;
/** A page's hint is sent up to this long after the change it tells of (HINTS' throttle, and some). */
const HINT_LAG_MS = 250;
/** The longest wait between two restarts of a screencast that keeps showing nothing new. */
const MAX_WAIT_MS = 16_000;

/**
 * Tells when a running screencast has stalled: Chromium sometimes stops sending a tab's frames
 * after its document was replaced, so a person watching saw a still picture of a page that went
 * on changing. The page's hints say it changed; a change no frame followed within STALL_MS means
 * the screencast is to be started again (a start sends the screen as it is).
 *
 * A page can also change in ways that draw nothing new (a hidden element's attribute): each
 * restart then waits twice as long as the last, up to MAX_WAIT_MS, until frames come on their
 * own again.
 */
export class StallWatch {
  private lastFrameAt: number;
  /** The first change since the last frame that no frame can have shown yet. */
  private unshownSince: number | undefined;
  private restartedAt = 0;
  private wait = STALL_MS;

  constructor(now: number) {
    this.lastFrameAt = now;
  }

  frame(now: number): void {
    this.unshownSince = undefined;
    // A frame long after the last restart came on its own: the screencast is sending again.
    if (now - this.restartedAt > STALL_MS) this.wait = STALL_MS;
    this.lastFrameAt = now;
  }

  /** A screencast (re)started now: its first frame shows the screen as it is. */
  started(now: number): void {
    this.unshownSince = undefined;
    this.lastFrameAt = now;
  }

  /** The page told of a change, which happened up to HINT_LAG_MS before now. */
  hint(now: number): void {
    if (now - this.lastFrameAt > HINT_LAG_MS) this.unshownSince ??= now;
  }

  /** Whether the screencast is to be started again now (and, if so, counts it as started). */
  stalled(now: number): boolean {
    if (this.unshownSince === undefined || now - this.unshownSince < this.wait) return false;
    this.started(now);
    this.restartedAt = now;
    this.wait = Math.min(this.wait * 2, MAX_WAIT_MS);
    return true;
  }
}
