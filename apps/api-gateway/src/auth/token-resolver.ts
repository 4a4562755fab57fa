/**
 * Resolves an API token to its merchant without touching the database on each request: results
 * are cached by the token's SHA-256. A rotation broadcast (RabbitMQ fanout) evicts a merchant's
 * entries on every replica at once; while that broadcast is not connected, entries live at most
 * one second, so a rotated-away token still stops working within a second.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface TokenLookup {
  /** The merchant of this token hash (hex SHA-256), or undefined when no merchant has it. */
  (tokenHash: string): Promise<string | undefined>;
}

interface Entry {
  merchantId: string | undefined;
  at: number;
}

const DISCONNECTED_TTL_MS = 1000;
const NEGATIVE_TTL_MS = 1000;
const MAX_ENTRIES = 100_000;

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export class TokenResolver {
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<string | undefined>>();
  constructor(
    private readonly lookup: TokenLookup,
    private readonly ttlMs: number,
    /** Whether the rotation broadcast is being received right now. */
    private readonly broadcastLive: () => boolean = () => false,
    private readonly now: () => number = Date.now,
  ) {}

  async resolve(token: string): Promise<string | undefined> {
    const hash = hashToken(token);
    const hit = this.cache.get(hash);
    if (hit && this.now() - hit.at < this.ttlFor(hit)) return hit.merchantId;
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.fetch(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    return pending;
  }

  /** Called by the rotation subscriber. */
  invalidateMerchant(merchantId: string): void {
    for (const [hash, entry] of this.cache) if (entry.merchantId === merchantId) this.cache.delete(hash);
  }

  /** On every (re)subscription to the broadcast: rotations may have been missed meanwhile. */
  clear(): void {
    this.cache.clear();
  }

  private ttlFor(entry: Entry): number {
    if (entry.merchantId === undefined) return NEGATIVE_TTL_MS;
    // While the broadcast is down nobody can tell us about rotations: trust entries for 1 s only.
    return this.broadcastLive() ? this.ttlMs : Math.min(this.ttlMs, DISCONNECTED_TTL_MS);
  }

  private async fetch(hash: string): Promise<string | undefined> {
    const merchantId = await this.lookup(hash);
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(hash, { merchantId, at: this.now() });
    return merchantId;
  }
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
