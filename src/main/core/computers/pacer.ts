/**
 * Hands values to `take` at most once per `intervalMs`: one that comes sooner waits for its turn,
 * replaced by any newer one, so the latest always arrives: frames to a viewer at its rate, and
 * frames made of screenshots for a video of a few a second (work worth doing only as often as
 * its result is used).
 */
export class Pacer<T> {
  /** When the next value may be taken: an ideal cadence, so timer lateness does not add up. */
  private nextAt = 0;
  private waiting: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly take: (value: T) => void,
  ) {}

  push(value: T): void {
    const now = Date.now();
    if (now >= this.nextAt) {
      // On schedule (or less than an interval late): keep the cadence; after a pause, afresh.
      this.nextAt =
        this.nextAt + this.intervalMs > now ? this.nextAt + this.intervalMs : now + this.intervalMs;
      this.take(value);
      return;
    }
    this.waiting = { value };
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const next = this.waiting;
      this.waiting = undefined;
      if (next) this.push(next.value);
    }, this.nextAt - now);
    this.timer.unref();
  }

  /** Forgets the value waiting, if any (something newer made it stale). */
  drop(): void {
    this.waiting = undefined;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = undefined;
  }
}
