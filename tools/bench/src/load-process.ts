/**
 * The closed-loop load generator, in its own process (argv: origin connections seconds [tokens]
 * [deposit|withdraw]): `connections` clients each POST a deposit (or a withdraw of 0.01) with a
 * unique orderId, wait for the answer, and send the next, for `seconds`; tokens (comma-separated)
 * take turns, so a list spreads the load over that many merchants. Used the same way for the product and the baseline. Sends back
 * { perSecond, ok, other, p50, p99 } where ok counts 2xx answers and latencies are per request.
 */
import { Pool } from 'undici';
import { createSender, reportLoad, type LoadCount } from './load-report';

async function main(): Promise<LoadCount> {
  const [origin, connectionsArg, secondsArg, tokenArg, kind = 'deposit'] = process.argv.slice(2);
  const connections = Number(connectionsArg);
  const seconds = Number(secondsArg);
  const pool = new Pool(origin!, { connections, pipelining: 1 });
  const { send, count } = createSender(pool, {
    tokens: tokenArg ? tokenArg.split(',') : [],
    kind: kind === 'withdraw' ? 'withdraw' : 'deposit',
    tag: `load-${process.pid}`,
  });
  let seq = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) await send(++seq);
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  return { ...count, seconds: elapsed };
}

reportLoad(main);
