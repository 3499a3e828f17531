/** A change the page told of, not followed by a frame for this long, is a stalled screencast. */
const STALL_MS = 1000;
/** A page's hint is sent up to this long after the change it tells of (HINTS' throttle, and some). */
const HINT_LAG_MS = 250;
/**
 * How long a hint that came right after a frame waits for one of its own: that frame may have
 * shown the change, so a restart would mostly send the same screen again; or it was the last
 * frame before a stall, which must not leave a still picture for good.
 */
const UNSURE_MS = 3000;
/** The longest wait between two restarts of a screencast that keeps showing nothing new. */
const MAX_WAIT_MS = 16_000;

/**
 * Tells when a running screencast has stalled: Chromium sometimes stops sending a tab's frames
 * after its document was replaced, so a person watching saw a still picture of a page that went
 * on changing. The page's hints say it changed; a change no frame followed within STALL_MS means
 * the screencast is to be started again (a start sends the screen as it is). A frame that came
 * less than HINT_LAG_MS before the hint may be the change's own (it is drawn sooner than the hint
 * is sent) or the last before a stall: no frame after the hint for UNSURE_MS restarts it then.
 *
 * A page can also change in ways that draw nothing new (a hidden element's attribute): each
 * restart then waits twice as long as the last, up to MAX_WAIT_MS, until frames come on their
 * own again.
 */
export class StallWatch {
  private lastFrameAt: number;
  /** The first change since the last frame that no frame has followed yet. */
  private unshownSince: number | undefined;
  /** Whether that change came too long after the last frame for it to have shown it. */
  private surelyUnshown = false;
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
    this.unshownSince ??= now;
    if (now - this.lastFrameAt > HINT_LAG_MS) this.surelyUnshown = true;
    else if (this.unshownSince === now) this.surelyUnshown = false;
  }

  /** Whether the screencast is to be started again now (and, if so, counts it as started). */
  stalled(now: number): boolean {
    if (this.unshownSince === undefined) return false;
    const wait = this.surelyUnshown ? this.wait : Math.max(this.wait, UNSURE_MS);
    if (now - this.unshownSince < wait) return false;
    this.started(now);
    this.restartedAt = now;
    this.wait = Math.min(this.wait * 2, MAX_WAIT_MS);
    return true;
  }
}
