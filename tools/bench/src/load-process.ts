/**
 * The closed-loop load generator, in its own process (argv: origin connections seconds [tokens]
 * [deposit|withdraw]): `connections` clients each POST a deposit (or a withdraw of 0.01) with a
 * unique orderId, wait for the answer, and send the next, for `seconds`; tokens (comma-separated)
 * take turns, so a list spreads the load over that many merchants. Used the same way for the product and the baseline. Sends back
 * { perSecond, ok, other, p50, p99 } where ok counts 2xx answers and latencies are per request.
 */
import { Pool } from 'undici';
import { reportLoad, type LoadCount } from './load-report';

async function main(): Promise<LoadCount> {
  const [origin, connectionsArg, secondsArg, tokenArg, kind = 'deposit'] = process.argv.slice(2);
  const tokens = tokenArg ? tokenArg.split(',') : [];
  const path = kind === 'withdraw' ? '/api/createWithdraw' : '/api/createDeposit';
  const body = (orderId: string) =>
    JSON.stringify(kind === 'withdraw' ? { amount: '0.01', currency: 'USD', orderId, destination: 'acct-bench' } : { amount: '1.00', currency: 'USD', orderId });
  const connections = Number(connectionsArg);
  const seconds = Number(secondsArg);
  const pool = new Pool(origin!, { connections, pipelining: 1 });
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
          const n = ++seq;
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (tokens.length) headers.serviceApiToken = tokens[n % tokens.length]!;
          const res = await pool.request({ path, method: 'POST', headers, body: body(`load-${process.pid}-${n}`) });
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
  return { ok, other, latencies, seconds: elapsed };
}

reportLoad(main);
