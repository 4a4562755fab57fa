/**
 * `npm run bench:callbacks [-- N]`: N deposits through the whole pipe — API → PostgreSQL (outbox) →
 * relay → RabbitMQ → callback-svc → a local receiver answering 200 — against a raw undici POST loop
 * to the same receiver in the same run (the baseline), with the same concurrency as callback-svc's
 * prefetch. Prints deliveries/s for both, their ratio, and p50/p99 from commit (the transaction's
 * createdAt) to callback received. The machine is shared and noisy: read the ratio, not the
 * absolute figures.
 */
import { request } from 'undici';
import { startCallbackReceiver } from '@dw/testing';
import { api, startStack } from '../test/support/stack';

const N = Number(process.argv[2] ?? 2000);
const PREFETCH = 32;
const CREATE_CONCURRENCY = 32;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function pool<T>(count: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

async function main() {
  const receiver = await startCallbackReceiver();
  const body = JSON.stringify({ id: 'evt_bench', type: 'deposit.pending', sequence: 1, data: {} });

  // Baseline: the receiver's own capacity through a plain undici loop.
  const baseStart = performance.now();
  await pool(N, PREFETCH, async () => {
    const res = await request(`${receiver.url}/baseline`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    await res.body.dump();
  });
  const baselineRate = N / ((performance.now() - baseStart) / 1000);
  receiver.received.length = 0;

  const stack = await startStack('bench', {
    RATE_LIMIT_PER_SECOND: '1000000',
    CALLBACK_PREFETCH: String(PREFETCH),
    LOG_LEVEL: 'error',
  });
  try {
    const m = stack.createMerchant('Bench');
    const call = api(stack, m.apiToken);
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/cb` });
    const createdAt = new Map<string, number>();
    const start = performance.now();
    const done = receiver.waitFor(N, (r) => r.path === '/cb', 600_000);
    await pool(N, CREATE_CONCURRENCY, async (i) => {
      const res = await call('POST', '/api/createDeposit', { amount: '1.00', currency: 'USD', orderId: `bench-${i}` });
      createdAt.set(res.json.id, Date.parse(res.json.createdAt));
    });
    const got = await done;
    const seconds = (performance.now() - start) / 1000;
    const latencies = got.map((r) => r.at - createdAt.get(r.json.data.id)!).sort((a, b) => a - b);
    const rate = N / seconds;
    console.log(
      JSON.stringify(
        {
          events: N,
          pipelineDeliveriesPerSecond: Math.round(rate),
          baselineUndiciPostsPerSecond: Math.round(baselineRate),
          ratio: Number((rate / baselineRate).toFixed(3)),
          commitToCallbackMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
        },
        null,
        2,
      ),
    );
  } finally {
    await stack.close();
    await receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
