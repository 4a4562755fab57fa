/**
 * In-memory token buckets: `capacity` tokens refilled continuously at `refillPerSecond`, so a
 * client gets a burst of `capacity` and then `refillPerSecond` a second. (@fastify/rate-limit counts
 * fixed windows, which let 2N through across a window edge; the contract asks for a bucket.)
 */
interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  /** A burst of `perMinute`, refilled at `perMinute` a minute: the per-address limits. */
  static perMinute(perMinute: number, now: () => number = Date.now): TokenBuckets {
    return new TokenBuckets(perMinute, now, perMinute / 60);
  }

  constructor(
    private readonly capacity: number,
    private readonly now: () => number = Date.now,
    private readonly refillPerSecond: number = capacity,
  ) {}

  /** 0 when the request may pass (and is counted), else the whole seconds to wait. */
  take(key: string): number {
    const b = this.current(key);
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return this.waitFor(b);
  }

  /**
   * Counts `amount` tokens even when fewer are left (the bucket goes into debt): 0 when they were
   * there, else the milliseconds until the debt is paid. For a pace (merchant-pace.ts), not a refusal.
   */
  spend(key: string, amount: number): number {
    const b = this.current(key);
    this.buckets.set(key, b);
    b.tokens -= amount;
    return b.tokens >= 0 ? 0 : Math.ceil((-b.tokens / this.refillPerSecond) * 1000);
  }

  /** Gives back a token taken by `take` (never beyond the capacity). */
  refund(key: string): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.capacity, b.tokens + 1);
  }

  /** Like take, without counting: 0 when a token is left, else the whole seconds to wait. */
  peek(key: string): number {
    const b = this.buckets.get(key);
    if (!b) return 0;
    const cur = this.current(key);
    return cur.tokens >= 1 ? 0 : this.waitFor(cur);
  }

  /** Drops full buckets so idle keys don't accumulate memory. */
  sweep(): void {
    const now = this.now();
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.refillPerSecond >= this.capacity) this.buckets.delete(key);
    }
  }

  private current(key: string): Bucket {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    b.tokens = Math.min(this.capacity, b.tokens + ((now - b.at) / 1000) * this.refillPerSecond);
    b.at = now;
    return b;
  }

  private waitFor(b: Bucket): number {
    return Math.max(1, Math.ceil((1 - b.tokens) / this.refillPerSecond));
  }
}
