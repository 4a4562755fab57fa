/**
 * Per-token rate limit: a token bucket of RATE_LIMIT_PER_SECOND tokens refilled continuously at that
 * rate, so a client gets a burst of N and then N per second. (@fastify/rate-limit counts fixed
 * windows, which let 2N through across a window edge; the contract asks for a bucket.)
 */
interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when the request may pass (and is counted), else the whole seconds to wait. */
  take(key: string): number {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.perSecond, at: now };
    b.tokens = Math.min(this.perSecond, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Drops full buckets so idle tokens don't accumulate memory. */
  sweep(): void {
    const now = this.now();
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.perSecond) this.buckets.delete(key);
    }
  }
}
