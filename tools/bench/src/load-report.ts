/**
 * What the closed-loop (load-process.ts) and open-loop (open-loop-process.ts) generators share: the
 * create they send and count, and how they end: each sends the parent { perSecond, ok, other, p50,
 * p99 } (a LoadResult of processes.ts) and disconnects, or prints the error and exits 1.
 */
import type { Pool } from 'undici';
import { percentile } from './stats';

export interface LoadCount {
  ok: number;
  other: number;
  /** One per request, ms. */
  latencies: number[];
  /** How long the load ran, from its first request to its last answer. */
  seconds: number;
}

export interface CreateOptions {
  /** Tokens taking turns (none: the baseline, which needs none). */
  tokens: string[];
  /** A deposit of 1.00, or a withdraw of 0.01. */
  kind: 'deposit' | 'withdraw';
  /** Makes each orderId unique across the run's processes: `${tag}-${n}`. */
  tag: string;
}

/**
 * `send(n)` POSTs create number n with a unique orderId and counts its answer: ok for a 2xx, other
 * for anything else or no answer, and its latency either way. Never rejects.
 */
export function createSender(pool: Pool, { tokens, kind, tag }: CreateOptions) {
  const count: Omit<LoadCount, 'seconds'> = { ok: 0, other: 0, latencies: [] };
  const path = kind === 'withdraw' ? '/api/createWithdraw' : '/api/createDeposit';
  const body = (orderId: string) =>
    JSON.stringify(kind === 'withdraw' ? { amount: '0.01', currency: 'USD', orderId, destination: 'acct-bench' } : { amount: '1.00', currency: 'USD', orderId });
  async function send(n: number): Promise<void> {
    const sent = performance.now();
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (tokens.length) headers.serviceApiToken = tokens[n % tokens.length]!;
      const res = await pool.request({ path, method: 'POST', headers, body: body(`${tag}-${n}`) });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) count.ok++;
      else count.other++;
    } catch {
      count.other++;
    }
    count.latencies.push(performance.now() - sent);
  }
  return { send, count };
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
