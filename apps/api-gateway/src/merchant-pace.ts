/**
 * What a merchant's viewer answers (list pages, downloads, statements) may cost the others, paced
 * in bytes: each merchant's answers from the ui, together, pass through this gateway at no more
 * than GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND, after a burst of the same size. The shares
 * (merchant-concurrency.ts) bound how many answers a merchant has in progress, not how fast it
 * reads them: one merchant reading 100-row JSON pages of its largest rows in a loop (3.3 MB each,
 * about 80 ms of CPU over the gateway, the ui and transactions-svc) took 1.5 of this machine's 2
 * cores, and another merchant's creates went from p50 7 to 31 ms (docs/benchmarks.md). Paced, the
 * merchant's next page, and a download's next rows, are asked for only as fast as its bytes go
 * out, because the ui and transactions-svc produce each as the last one is read. An answer of
 * ordinary rows (about 50 KB a page) never waits. Kept per gateway replica, like the other shares.
 */
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { TokenBuckets } from './auth/token-bucket';

/** GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND's default: 8 MiB a second. */
export const DEFAULT_VIEW_BYTES_PER_SECOND = 8 * 1024 * 1024;

export class MerchantPace {
  /** Bytes per merchant: a burst of bytesPerSecond, refilled at bytesPerSecond. */
  private readonly buckets: TokenBuckets;

  constructor(bytesPerSecond: number, now: () => number = Date.now) {
    this.buckets = new TokenBuckets(bytesPerSecond, now, bytesPerSecond);
  }

  /** Counts `bytes` sent to `merchant`: 0 when they may go at once, else the ms to wait before they go. */
  spend(merchant: string, bytes: number): number {
    return this.buckets.spend(merchant, bytes);
  }

  /** `body`, passed on no faster than the merchant's pace; destroying either end destroys both. */
  paced(merchant: string, body: Readable): Readable {
    let timer: NodeJS.Timeout | undefined;
    const out = new Transform({
      transform: (chunk: Buffer, _encoding, done: TransformCallback) => {
        const wait = this.spend(merchant, chunk.length);
        if (wait === 0) return done(null, chunk);
        timer = setTimeout(() => {
          timer = undefined;
          done(null, chunk);
        }, wait);
      },
      destroy: (err, done) => {
        if (timer) clearTimeout(timer);
        done(err);
      },
    });
    return pipeline(body, out, () => undefined);
  }

  /** Drops full buckets so idle merchants don't accumulate memory. */
  sweep(): void {
    this.buckets.sweep();
  }
}
