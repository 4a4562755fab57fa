/**
 * The proofs (internal-auth.ts) this process has accepted, each remembered until it could no
 * longer pass the freshness window, so that a captured x-internal-auth header is good for one
 * request: the one its signer sent. Memory is bounded by the window: an entry is forgotten at
 * most 2 windows (plus a second) after it was recorded, so it holds about two minutes of accepted
 * requests. An entry is two small numbers (about 50 bytes in the Map), not the signature's string:
 * at 1,500 requests a second that is some 5 MB rather than 20.
 *
 * Per process: each replica of a service remembers its own. A captured request can therefore be
 * played once more to each other replica within the window, never with another body, path or
 * merchant (docs/decisions.md, the trust model).
 */
import type { Proof } from './internal-auth';

export class ReplayGuard {
  /** Key → the second after which the proof fails the freshness check anyway; insertion order. */
  private readonly seen = new Map<number, number>();

  constructor(
    /** The freshness window a proof's timestamp must fall in, either way (INTERNAL_AUTH_WINDOW_SECONDS). */
    private readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * True the first time a proof is presented and false for every later one while it could still be
   * fresh. Call it once the whole request (body included) is proven, before acting on it; it is
   * synchronous, so of two concurrent copies exactly one gets true.
   */
  firstSighting(proof: Proof): boolean {
    const now = this.now() / 1000;
    this.forgetExpired(now);
    // 52 bits of the HMAC, a number exactly: two of the ~200,000 proofs a busy minute holds share
    // them once in about 10^10 such minutes (a legitimate request refused), and a forger who could
    // aim at them would need the secret.
    const key = Number.parseInt(proof.signature.slice(0, 13), 16);
    if (this.seen.has(key)) return false;
    this.seen.set(key, proof.t + this.windowSeconds + 1);
    return true;
  }

  /** Proofs remembered now (for tests and metrics). */
  get size(): number {
    return this.seen.size;
  }

  /**
   * Drops expired entries from the oldest on. Expiries are nearly in insertion order (a signer's
   * clock may be up to a window ahead), so stopping at the first live entry leaves at most a window
   * of expired ones behind it for a while; they never match a fresh proof anyway.
   */
  private forgetExpired(now: number): void {
    for (const [key, until] of this.seen) {
      if (until > now) return;
      this.seen.delete(key);
    }
  }
}
