/**
 * How many requests one merchant may have in progress through one upstream of this gateway process
 * (GATEWAY_MERCHANT_CONCURRENCY), the concurrent-requests limiter beside the per-token rate limit.
 * A request is in progress from when it is forwarded until its answer is over: sent, failed, or cut
 * off by the stall timeout. Each upstream pool has 64 connections; without a bound, one merchant whose
 * client requests 4 MB pages of its list and never reads them held all 64 connections to the ui,
 * and every other merchant's /ui request waited 10 s for a 503 (docs/decisions.md, "Fair use").
 *
 * To transactions-svc the share is guaranteed, not a cap while the upstream is idle: beyond it a
 * merchant's request is still sent while a whole share of the pool's connections stays free for
 * others (so one busy merchant loses nothing: with a strict cap of 16 the bench's 50-connection
 * closed loop made 25 % fewer creates a second, at 30 % more CPU each). To the ui it is a cap: its
 * answers are heavy, and a hoarder holding 48 pages made another merchant's viewer wait 7 s where
 * 16 cost it 0.6 s (lendBeyondShare). Otherwise a request waits, first in first out per merchant
 * and round robin between merchants, so that a burst the rate limit admits (100 simultaneous
 * withdraws, say) is served rather than refused. It waits at most `waitMs`, and at most
 * `maxWaiting` of one merchant wait; past either it gets 429 rate_limited. Requests that carry no
 * merchant (the /ui page and its assets) are counted per client address instead. Counted in this
 * process only, like the export slots.
 */
import { ApiError } from '@dw/http-kit';
import { metricsRegistry } from '@dw/telemetry';
import type { ServerResponse } from 'node:http';
import { Counter } from 'prom-client';

export const merchantConcurrencyLimited = new Counter({
  name: 'dw_gateway_merchant_concurrency_limited_total',
  help: 'Requests past their merchant’s concurrency share at the gateway, by upstream and outcome (waited: served after a wait; refused: 429).',
  labelNames: ['upstream', 'outcome'] as const,
  registers: [metricsRegistry],
});

/** GATEWAY_MERCHANT_CONCURRENCY's default: a quarter of an upstream pool's 64 connections. */
export const DEFAULT_MERCHANT_CONCURRENCY = 16;

/** GATEWAY_MERCHANT_PAGE_CONCURRENCY's default: list pages of one merchant in progress at once (app.ts, isListPage). */
export const DEFAULT_PAGE_CONCURRENCY = 1;

export interface MerchantConcurrencyOptions {
  /** Which upstream, for the metric's label: `transactions-svc`, `ui`, `ui-list-pages`. */
  upstream: string;
  /** What is counted, for the 429's detail: `requests` unless said otherwise. */
  counted?: string;
  /** GATEWAY_MERCHANT_CONCURRENCY: always admitted, whatever others hold. */
  perMerchant: number;
  /** The upstream pool's connections (UPSTREAM_CONNECTIONS). */
  connections: number;
  /**
   * Whether a merchant beyond its share may use connections while a whole share of them stays free
   * for others. Yes for transactions-svc, whose answers are small and whose creates gain from
   * concurrency; no for the ui, whose answers (pages of up to 4 MB, rendered per request) cost CPU
   * that a share of connections would not bound.
   */
  lendBeyondShare: boolean;
  /** How many of one merchant's requests may wait at once (the rate limit's burst). */
  maxWaiting: number;
  /** How long one may wait (UPSTREAM_TIMEOUT_MS). */
  waitMs: number;
}

interface Waiter {
  grant(): void;
  timer: NodeJS.Timeout;
}

interface Share {
  inProgress: number;
  waiting: Waiter[];
}

/** The 429 of a merchant over its share: it is its own requests that must finish first. */
const busy = ({ perMerchant, counted = 'requests' }: MerchantConcurrencyOptions) =>
  new ApiError(
    429,
    'rate_limited',
    `Too many of your ${counted} are in progress at once (${perMerchant} ${perMerchant === 1 ? 'is' : 'are'} always admitted); retry after 1 s, once one has finished (read each answer to its end).`,
    undefined,
    { 'retry-after': '1' },
  );

export class MerchantConcurrency {
  private readonly shares = new Map<string, Share>();
  /** Merchants with requests waiting, in the order they began to wait: served round robin. */
  private readonly waitingKeys = new Set<string>();
  private total = 0;

  constructor(private readonly opts: MerchantConcurrencyOptions) {}

  /**
   * Resolves with the function that gives the place back (call it once, when the answer is over)
   * once `key` may have one more request in progress; rejects with a 429 past the wait's bounds.
   * `response` is watched while waiting: a client that leaves gives its place in the queue up.
   */
  enter(key: string, response: ServerResponse): Promise<() => void> {
    if (response.closed || response.destroyed) return Promise.reject(busy(this.opts));
    const share = this.shares.get(key) ?? this.open(key);
    if (share.waiting.length === 0 && this.admits(share)) {
      this.take(share);
      return Promise.resolve(this.releaser(key, share));
    }
    if (share.waiting.length >= this.opts.maxWaiting) {
      merchantConcurrencyLimited.inc({ upstream: this.opts.upstream, outcome: 'refused' });
      this.closeIfUnused(key, share);
      return Promise.reject(busy(this.opts));
    }
    return new Promise((resolve, reject) => {
      const leave = (): boolean => {
        clearTimeout(waiter.timer);
        response.off('close', gone);
        const at = share.waiting.indexOf(waiter);
        if (at === -1) return false;
        share.waiting.splice(at, 1);
        if (share.waiting.length === 0) this.waitingKeys.delete(key);
        this.closeIfUnused(key, share);
        return true;
      };
      // Nobody reads this answer; the 429 only names, in the log and the metrics, what became of it.
      const gone = () => {
        if (leave()) reject(busy(this.opts));
      };
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          response.off('close', gone);
          merchantConcurrencyLimited.inc({ upstream: this.opts.upstream, outcome: 'waited' });
          resolve(this.releaser(key, share));
        },
        timer: setTimeout(() => {
          if (!leave()) return;
          merchantConcurrencyLimited.inc({ upstream: this.opts.upstream, outcome: 'refused' });
          reject(busy(this.opts));
        }, this.opts.waitMs),
      };
      share.waiting.push(waiter);
      this.waitingKeys.add(key);
      response.once('close', gone);
    });
  }

  /** Requests in progress and waiting for `key`, and in progress in all (for tests and the debugger). */
  usage(key: string): { inProgress: number; waiting: number; total: number } {
    const share = this.shares.get(key);
    return { inProgress: share?.inProgress ?? 0, waiting: share?.waiting.length ?? 0, total: this.total };
  }

  /**
   * Within its share a merchant is always admitted; beyond it, where the upstream lends, only while
   * a whole share of its connections stays free for another merchant. So the bound costs nothing
   * while no one else needs the connections (a single busy merchant keeps 48 of 64 in progress, and
   * the batching that comes with them), and anyone arriving finds a share's worth free.
   */
  private admits(share: Share): boolean {
    if (share.inProgress < this.opts.perMerchant) return true;
    return this.opts.lendBeyondShare && this.total < this.opts.connections - this.opts.perMerchant;
  }

  private take(share: Share): void {
    share.inProgress++;
    this.total++;
  }

  private open(key: string): Share {
    const share: Share = { inProgress: 0, waiting: [] };
    this.shares.set(key, share);
    return share;
  }

  private releaser(key: string, share: Share): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      share.inProgress--;
      this.total--;
      this.admitWaiting();
      this.closeIfUnused(key, share);
    };
  }

  /** Hands freed places to waiting requests, one per merchant per round, while any is admitted. */
  private admitWaiting(): void {
    let admitted = true;
    while (admitted && this.waitingKeys.size > 0) {
      admitted = false;
      for (const key of this.waitingKeys) {
        const share = this.shares.get(key)!;
        if (!this.admits(share)) continue;
        const waiter = share.waiting.shift()!;
        if (share.waiting.length === 0) this.waitingKeys.delete(key);
        this.take(share);
        waiter.grant();
        admitted = true;
      }
    }
  }

  private closeIfUnused(key: string, share: Share): void {
    if (share.inProgress === 0 && share.waiting.length === 0 && this.shares.get(key) === share) this.shares.delete(key);
  }
}
