/**
 * A token bucket per name (an organization: keys are cheap to make, so a bucket per key would
 * limit nothing): `burst` requests at once, refilled at `rate` a second.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limits: () => { rate: number; burst: number },
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Takes a token; when none is left, the seconds until one is. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const { rate, burst } = this.limits();
    const at = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at };
    bucket.tokens = Math.min(burst, bucket.tokens + ((at - bucket.at) / 1000) * rate);
    bucket.at = at;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: (1 - bucket.tokens) / rate };
  }

  forget(key: string): void {
    this.buckets.delete(key);
  }
}
