/**
 * How a load process ends, shared by the closed-loop (load-process.ts) and open-loop
 * (open-loop-process.ts) generators: it sends the parent { perSecond, ok, other, p50, p99 } (a
 * LoadResult of processes.ts) and disconnects, or prints the error and exits 1.
 */
import { percentile } from './stats';

export interface LoadCount {
  ok: number;
  other: number;
  /** One per request, ms. */
  latencies: number[];
  /** How long the load ran, from its first request to its last answer. */
  seconds: number;
}

export function reportLoad(run: () => Promise<LoadCount>): void {
  run().then(
    ({ ok, other, latencies, seconds }) => {
      process.send!({ perSecond: ok / seconds, ok, other, p50: percentile(latencies, 50), p99: percentile(latencies, 99) });
      process.disconnect();
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
