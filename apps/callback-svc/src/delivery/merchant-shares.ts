/**
 * Fair delivery: each merchant gets its own share of this process's delivery capacity, so one
 * merchant's slow, hanging or refusing endpoint never delays another merchant's callbacks
 * (docs/callbacks.md). The rule, per merchant and per callback-svc replica:
 *
 * - at most `perMerchant` callbacks in flight (`slowPerMerchant` while its endpoint is slow: its
 *   recent attempts took longer than `slowAfterMs` on average, or one in flight has been running
 *   that long; or failing: most of its recent attempts failed, however fast. A failing endpoint's
 *   retries come back in waves, and at a failure a millisecond each they would take the process's
 *   whole capacity from the front of the one queue: seen from outside, another merchant's
 *   callbacks waited up to 10.8 s behind them);
 * - more of its messages wait here, in order, for its next free slot: any number while its
 *   endpoint is fast (each holds a prefetch slot for milliseconds); while it is slow, as many as
 *   its slots get through in `horizonMs` (the longest throttle wait, so its slots never idle
 *   between two returns from the throttle queue), but no more than its part of the slow half
 *   (below) split evenly between the merchants slow now, and only while slow merchants together
 *   hold less than half of `capacity` (the prefetch): the other half is always there for everyone
 *   else, and one slow merchant's backlog never keeps another slow merchant out of the slow half;
 * - otherwise the message is throttled: handed to a RabbitMQ throttle queue that brings it back
 *   later, not counted as an attempt. So a slow merchant's backlog waits in the broker, never in
 *   front of anyone else's messages.
 *
 * A periodic sweep throttles what waits beyond those bounds (a merchant whose endpoint turned
 * slow). Nothing here outlives a crash, and nothing needs to: an unacked message goes back to its
 * queue.
 */
export interface MerchantSharesOptions {
  perMerchant: number;
  slowPerMerchant: number;
  slowAfterMs: number;
  /** Messages this process holds at most (the channel's prefetch). */
  capacity: number;
  /** How far ahead a slow merchant's local backlog reaches: the longest throttle wait. */
  horizonMs: number;
  /** How often waiting messages of merchants that turned slow are throttled (default slowAfterMs / 4). */
  sweepIntervalMs?: number;
  now?: () => number;
}

/**
 * A delivery slot: call `sending` when the HTTP attempt starts (only time spent waiting on the
 * merchant's endpoint makes it slow, not time spent on our own database) and `release` with the
 * attempt (its duration and whether it succeeded), or nothing when none was made, once the delivery is done.
 */
export interface Slot {
  sending(): void;
  release(attempt?: { durationMs: number; succeeded: boolean }): void;
}

export type Admission = { kind: 'run'; slot: Slot } | { kind: 'throttle' } | { kind: 'closed' };

interface Share {
  /** The deliveries in flight, with the start time of their HTTP attempt once it has started. */
  running: Set<{ sendingSince?: number }>;
  waiting: Array<(admission: Admission) => void>;
  /** Exponentially weighted mean duration of recent attempts, ms; undefined before the first. */
  meanMs?: number;
  /** Exponentially weighted share of recent attempts that failed (0–1); undefined before the first. */
  failing?: number;
}

const WEIGHT = 0.2;
/** Failing: more than this share of recent attempts failed (about 4 failures in a row from success). */
const FAILING_ABOVE = 0.5;

export class MerchantShares {
  private readonly shares = new Map<string, Share>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Messages held for slow merchants (running and waiting); recounted by every sweep. */
  private slowHeld = 0;
  /** Merchants whose endpoint is slow; counted by every sweep. */
  private slowMerchants = 0;
  private readonly now: () => number;

  constructor(private readonly opts: MerchantSharesOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? Math.max(50, opts.slowAfterMs / 4));
    this.timer.unref();
  }

  /** Runs now, waits for the merchant's next free slot, or says to throttle. */
  admit(merchant: string): Admission | Promise<Admission> {
    if (this.closed) return { kind: 'closed' };
    const share = this.shareOf(merchant);
    const slow = this.isSlow(share);
    if (slow && this.slowHeld >= this.opts.capacity / 2) return { kind: 'throttle' };
    if (slow) this.slowHeld++;
    const cap = slow ? this.opts.slowPerMerchant : this.opts.perMerchant;
    if (share.running.size < cap) return { kind: 'run', slot: this.take(merchant, share) };
    if (slow && share.waiting.length >= this.waitingLimit(share)) {
      this.slowHeld--;
      return { kind: 'throttle' };
    }
    return new Promise((resolve) => share.waiting.push(resolve));
  }

  /** In flight and waiting, for metrics and tests. */
  stats(merchant: string): { running: number; waiting: number; slow: boolean } {
    const share = this.shares.get(merchant);
    return share ? { running: share.running.size, waiting: share.waiting.length, slow: this.isSlow(share) } : { running: 0, waiting: 0, slow: false };
  }

  /** Every waiting message is handed back (its handler sees `closed`); deliveries in flight go on. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const share of this.shares.values()) for (const resolve of share.waiting.splice(0)) resolve({ kind: 'closed' });
  }

  private take(merchant: string, share: Share): Slot {
    const entry: { sendingSince?: number } = {};
    share.running.add(entry);
    let released = false;
    return {
      sending: () => {
        entry.sendingSince = this.now();
      },
      release: (attempt) => {
        if (released) return;
        released = true;
        share.running.delete(entry);
        if (attempt !== undefined) {
          share.meanMs = weighted(share.meanMs, attempt.durationMs);
          share.failing = weighted(share.failing ?? 0, attempt.succeeded ? 0 : 1); // from 0: one failure alone is not failing
        }
        this.grant(merchant, share);
      },
    };
  }

  private grant(merchant: string, share: Share): void {
    // Entries granted here are not sending yet, so the cap cannot change inside the loop.
    const cap = this.capOf(share);
    while (share.waiting.length > 0 && share.running.size < cap) {
      share.waiting.shift()!({ kind: 'run', slot: this.take(merchant, share) });
    }
    if (share.running.size === 0 && share.waiting.length === 0 && !this.isSlow(share)) {
      this.shares.delete(merchant); // nothing worth remembering: memory stays bounded by active merchants
    }
  }

  private sweep(): void {
    const slow = [...this.shares.values()].filter((share) => this.isSlow(share));
    this.slowMerchants = slow.length;
    let held = 0;
    for (const share of slow) {
      const excess = share.waiting.length - this.waitingLimit(share);
      if (excess > 0) for (const resolve of share.waiting.splice(-excess)) resolve({ kind: 'throttle' });
      held += share.running.size + share.waiting.length;
    }
    this.slowHeld = held;
  }

  /**
   * A slow merchant's local backlog: what its slots get through within the horizon, within its even
   * part of the slow half (less its slots), and never less than its slots.
   */
  private waitingLimit(share: Share): number {
    const cap = this.opts.slowPerMerchant;
    const horizon = Math.floor((cap * this.opts.horizonMs) / Math.max(share.meanMs ?? this.opts.horizonMs, 1));
    const evenPart = Math.floor(this.opts.capacity / 2 / Math.max(this.slowMerchants, 1)) - cap;
    return Math.max(cap, Math.min(horizon, evenPart));
  }

  /** Slow or failing: held to the slow share and its bounded backlog. */
  private isSlow(share: Share): boolean {
    if ((share.meanMs ?? 0) > this.opts.slowAfterMs || (share.failing ?? 0) > FAILING_ABOVE) return true;
    const now = this.now();
    for (const { sendingSince } of share.running) if (sendingSince !== undefined && now - sendingSince > this.opts.slowAfterMs) return true;
    return false;
  }

  private capOf(share: Share): number {
    return this.isSlow(share) ? this.opts.slowPerMerchant : this.opts.perMerchant;
  }

  private shareOf(merchant: string): Share {
    let share = this.shares.get(merchant);
    if (!share) {
      share = { running: new Set(), waiting: [] };
      this.shares.set(merchant, share);
    }
    return share;
  }
}

const weighted = (mean: number | undefined, value: number): number => (mean === undefined ? value : mean + WEIGHT * (value - mean));
