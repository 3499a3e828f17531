/**
 * Hands values to `take` at most once per `intervalMs`: one that comes sooner waits for its turn,
 * replaced by any newer one, so the latest always arrives. For work worth doing only as often as
 * its result is used (a frame made of every screenshot, for a video of a few frames a second).
 */
export class Pacer<T> {
  private lastAt = -Infinity;
  private waiting: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly take: (value: T) => void,
  ) {}

  push(value: T): void {
    const wait = this.lastAt + this.intervalMs - Date.now();
    if (wait <= 0) return this.send(value);
    this.waiting = { value };
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const next = this.waiting;
      this.waiting = undefined;
      if (next) this.send(next.value);
    }, wait);
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

  private send(value: T): void {
    this.lastAt = Date.now();
    this.take(value);
  }
}
