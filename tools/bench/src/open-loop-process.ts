/**
 * The open-loop load generator, in its own process (argv: origin rate seconds token): POSTs a
 * deposit with a unique orderId `rate` times a second for `seconds`, on a schedule that does not
 * wait for answers (up to 200 connections), then waits for the last answers. Issue 20's equal-rate
 * rounds use it so the product and the same-work baseline are compared at the same load rather
 * than each at its own closed-loop rate. Sends back { perSecond, ok, other, p50, p99 } as
 * load-process.ts does, latencies per request.
 */
import { Pool } from 'undici';
import { createSender, reportLoad, type LoadCount } from './load-report';

async function main(): Promise<LoadCount> {
  const [origin, rateArg, secondsArg, token] = process.argv.slice(2);
  const rate = Number(rateArg);
  const seconds = Number(secondsArg);
  const pool = new Pool(origin!, { connections: 200, pipelining: 1 });
  const { send, count } = createSender(pool, { tokens: token ? [token] : [], kind: 'deposit', tag: `open-${process.pid}` });
  const inflight = new Set<Promise<void>>();
  let sent = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    while (sent < due) {
      const request = send(++sent).finally(() => inflight.delete(request));
      inflight.add(request);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  return { ...count, seconds: elapsed };
}

reportLoad(main);
