const WINDOW_MS = 10 * 60 * 1000;

export type IpBlock = { ip: string; failures: number; until: string };

/**
 * Failed authentications per client address in a sliding ten-minute window; at the limit the
 * address is blocked until its oldest counted failure leaves the window. A person can lift a
 * block (the window, the CLI).
 */
export class AuthFailures {
  private readonly failures = new Map<string, number[]>();

  /** Called when an address becomes blocked or a block is lifted. */
  onChange: () => void = () => {};

  constructor(
    private readonly limit: () => number,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  /** Seconds the address stays blocked, or 0. */
  blockedFor(ip: string): number {
    const times = this.recent(ip);
    if (times.length < this.limit()) return 0;
    return (times[times.length - this.limit()]! + WINDOW_MS - this.clock()) / 1000;
  }

  record(ip: string): void {
    const times = this.recent(ip);
    times.push(this.clock());
    // Only the newest `limit` failures decide a block: the list never grows past it.
    if (times.length > this.limit()) times.splice(0, times.length - this.limit());
    this.failures.set(ip, times);
    if (times.length === this.limit()) this.onChange();
  }

  /** Lifts a block and forgets the address's failures; false when it was not blocked. */
  lift(ip: string): boolean {
    const blocked = this.blockedFor(ip) > 0;
    this.failures.delete(ip);
    if (blocked) this.onChange();
    return blocked;
  }

  blocks(): IpBlock[] {
    return [...this.failures.keys()].flatMap((ip) => {
      const seconds = this.blockedFor(ip);
      if (seconds <= 0) return [];
      const until = new Date(this.clock() + seconds * 1000).toISOString();
      return [{ ip, failures: this.recent(ip).length, until }];
    });
  }

  private recent(ip: string): number[] {
    const since = this.clock() - WINDOW_MS;
    const times = (this.failures.get(ip) ?? []).filter((at) => at > since);
    if (times.length === 0) this.failures.delete(ip);
    return times;
  }
}
