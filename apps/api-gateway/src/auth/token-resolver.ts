/**
 * Resolves an API token to its merchant without touching the database on each request: results
 * are cached by the token's SHA-256. A rotation broadcast (RabbitMQ fanout) evicts a merchant's
 * entries on every replica at once; while that broadcast is not connected, entries live at most
 * one second, so a rotated-away token still stops working within a second.
 *
 * Junk is cheap: positive and negative answers live apart. Positive entries exist only for real
 * tokens (at most a few per merchant), so they need no bound and nothing evicts them; negative ones
 * live one second in an LRU of bounded size, so a flood of distinct junk tokens costs bounded
 * memory and never pushes a valid token out. (Malformed tokens never get here: authenticate.ts.)
 */
import { timingSafeEqual } from 'node:crypto';
import { apiTokenHash } from '@dw/contracts';
import { LRUCache } from 'lru-cache';

export interface TokenLookup {
  /** The merchant of this token hash (hex SHA-256), or undefined when no merchant has it. */
  (tokenHash: string): Promise<string | undefined>;
}

interface Entry {
  merchantId: string;
  at: number;
}

const DISCONNECTED_TTL_MS = 1000;
const NEGATIVE_TTL_MS = 1000;

export class TokenResolver {
  private readonly positive = new Map<string, Entry>();
  /** Token hash → when the negative answer expires (ms). Least recently used entries go first. */
  private readonly negative: LRUCache<string, number>;
  private readonly inFlight = new Map<string, Promise<string | undefined>>();
  /**
   * Bumped by every invalidation. A lookup that started before one may carry a rotated-away
   * token's merchant: its answer is returned to its own request but never cached.
   */
  private generation = 0;

  constructor(
    private readonly lookup: TokenLookup,
    private readonly ttlMs: number,
    /** Whether the rotation broadcast is being received right now. */
    private readonly broadcastLive: () => boolean = () => false,
    private readonly now: () => number = Date.now,
    /** TOKEN_NEGATIVE_CACHE_SIZE */
    negativeCacheSize = 10_000,
  ) {
    this.negative = new LRUCache({ max: negativeCacheSize });
  }

  async resolve(token: string): Promise<string | undefined> {
    const hash = apiTokenHash(token);
    const hit = this.positive.get(hash);
    if (hit) {
      if (this.now() - hit.at < this.positiveTtl()) return hit.merchantId;
      this.positive.delete(hash);
    }
    const negativeUntil = this.negative.get(hash);
    if (negativeUntil !== undefined) {
      if (this.now() < negativeUntil) return undefined;
      this.negative.delete(hash);
    }
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.fetch(hash);
      this.inFlight.set(hash, pending);
      const mine = pending;
      void mine.finally(() => {
        if (this.inFlight.get(hash) === mine) this.inFlight.delete(hash);
      }).catch(() => {});
    }
    return pending;
  }

  /**
   * What is known of a token without starting a lookup: a token known bad (undefined), or the answer
   * of its lookup already in flight, to join; null when only a new lookup can tell. Known good
   * tokens: `cached`.
   */
  known(token: string): Promise<string | undefined> | null {
    const hash = apiTokenHash(token);
    const negativeUntil = this.negative.get(hash);
    if (negativeUntil !== undefined && this.now() < negativeUntil) return Promise.resolve(undefined);
    return this.inFlight.get(hash) ?? null;
  }

  /** The merchant of a token the cache holds right now; never a lookup. */
  cached(token: string): string | undefined {
    const hit = this.positive.get(apiTokenHash(token));
    return hit && this.now() - hit.at < this.positiveTtl() ? hit.merchantId : undefined;
  }

  /** Called by the rotation subscriber. */
  invalidateMerchant(merchantId: string): void {
    this.generation++;
    for (const [hash, entry] of this.positive) if (entry.merchantId === merchantId) this.positive.delete(hash);
    // Requests arriving from now on must not join a lookup that began before the rotation.
    this.inFlight.clear();
  }

  /** On every (re)subscription to the broadcast: rotations may have been missed meanwhile. */
  clear(): void {
    this.generation++;
    this.positive.clear();
    this.negative.clear();
    this.inFlight.clear();
  }

  /** Entries held, for tests and metrics. */
  get size(): { positive: number; negative: number } {
    return { positive: this.positive.size, negative: this.negative.size };
  }

  private positiveTtl(): number {
    // While the broadcast is down nobody can tell us about rotations: trust entries for 1 s only.
    return this.broadcastLive() ? this.ttlMs : Math.min(this.ttlMs, DISCONNECTED_TTL_MS);
  }

  private async fetch(hash: string): Promise<string | undefined> {
    const startedAt = this.generation;
    const merchantId = await this.lookup(hash);
    if (this.generation !== startedAt) return merchantId;
    if (merchantId === undefined) this.negative.set(hash, this.now() + NEGATIVE_TTL_MS);
    else this.positive.set(hash, { merchantId, at: this.now() });
    return merchantId;
  }
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
