/**
 * Requests with a bad token (missing, malformed, unknown) are limited per client address: a bucket
 * of BAD_TOKEN_LIMIT_PER_MINUTE refilled at that many a minute. Kept in memory per replica: it is a
 * brake on guessing, and a brake per replica still brakes.
 *
 * A lookup takes its token from the bucket before it starts, and gives it back when the token
 * turns out to be good: counted only afterwards, as it was, every request already in flight passed
 * the check, and 200 at once from one address got 1,116 lookups in 10 s instead of about 70 (found
 * by an outside audit).
 *
 * An address whose bucket is empty is not refused outright: a merchant's good token may share the
 * address (a NAT, an egress proxy) with a guesser, and the contract refuses only bad tokens beyond
 * the limit. Its lookups go one at a time, each after SLOW_LANE_WAIT_MS, and at most
 * SLOW_LANE_MAX of all addresses together: a guesser past the limit gets about one lookup a second
 * per address, each answered 429, and a good token is served a second late.
 */
import { TokenBuckets } from './token-bucket';

/** How long a lookup from an address past its limit waits before it is made. */
export const SLOW_LANE_WAIT_MS = 1_000;

/** Lookups past their address's limit in progress at once, every address together. */
export const SLOW_LANE_MAX = 64;

export class BadTokenLimit {
  private readonly buckets: TokenBuckets;
  /** Addresses with a lookup past their limit in progress. */
  private readonly slowLane = new Set<string>();

  constructor(perMinute: number, now: () => number = Date.now) {
    this.buckets = TokenBuckets.perMinute(perMinute, now);
  }

  /** Whole seconds this address must wait before its bucket holds a token again (0: it holds one). */
  blocked(address: string): number {
    return this.buckets.peek(address);
  }

  /** Counts one bad token from this address (one that needed no lookup to be known bad). */
  record(address: string): void {
    this.buckets.take(address);
  }

  /** Takes a token for a lookup about to start: true when there was one. */
  reserve(address: string): boolean {
    return this.buckets.take(address) === 0;
  }

  /** Gives back the token of a lookup that found the token good (or could not tell). */
  refund(address: string): void {
    this.buckets.refund(address);
  }

  /**
   * The slow lane's turn for one lookup of an address past its limit, or false when the address
   * has one in progress or the lane is full. Call `leave` once the lookup is over.
   */
  enterSlowLane(address: string): boolean {
    if (this.slowLane.has(address) || this.slowLane.size >= SLOW_LANE_MAX) return false;
    this.slowLane.add(address);
    return true;
  }

  leaveSlowLane(address: string): void {
    this.slowLane.delete(address);
  }

  sweep(): void {
    this.buckets.sweep();
  }
}
