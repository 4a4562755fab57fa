/**
 * Requests with a bad token (missing, malformed, unknown) are limited per client address: a bucket
 * of BAD_TOKEN_LIMIT_PER_MINUTE refilled at that many a minute. Beyond it the address gets 429 with
 * Retry-After, checked before the token is even looked at, so a guesser costs one map lookup.
 * Kept in memory per replica: it is a brake on guessing, and a brake per replica still brakes.
 */
import { TokenBuckets } from './token-bucket';

export class BadTokenLimit {
  private readonly buckets: TokenBuckets;

  constructor(perMinute: number, now: () => number = Date.now) {
    this.buckets = TokenBuckets.perMinute(perMinute, now);
  }

  /** Whole seconds this address must wait before it may present another token (0: it may). */
  blocked(address: string): number {
    return this.buckets.peek(address);
  }

  /** Counts one bad token from this address. */
  record(address: string): void {
    this.buckets.take(address);
  }

  sweep(): void {
    this.buckets.sweep();
  }
}
