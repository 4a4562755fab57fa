/**
 * The closed-loop load generator, in its own process (argv: origin connections seconds [token]):
 * `connections` clients each POST a deposit with a unique orderId, wait for the answer, and send
 * the next, for `seconds`. Used the same way for the product and the baseline. Sends back
 * { perSecond, ok, other, p50, p99 } where ok counts 2xx answers and latencies are per request.
 */
import { Pool } from 'undici';
import { percentile } from './stats';

async function main() {
  const [origin, connectionsArg, secondsArg, token] = process.argv.slice(2);
  const connections = Number(connectionsArg);
  const seconds = Number(secondsArg);
  const pool = new Pool(origin!, { connections, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.serviceApiToken = token;
  const latencies: number[] = [];
  let ok = 0;
  let other = 0;
  let seq = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const sent = performance.now();
        try {
          const res = await pool.request({
            path: '/api/createDeposit',
            method: 'POST',
            headers,
            body: JSON.stringify({ amount: '1.00', currency: 'USD', orderId: `load-${process.pid}-${++seq}` }),
          });
          await res.body.dump();
          if (res.statusCode >= 200 && res.statusCode < 300) ok++;
          else other++;
        } catch {
          other++;
        }
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  process.send!({ perSecond: ok / elapsed, ok, other, p50: percentile(latencies, 50), p99: percentile(latencies, 99) });
  process.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
