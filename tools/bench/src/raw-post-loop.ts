/**
 * The receiver's own capacity: a raw undici POST loop in its own process, argv: url count
 * concurrency. Sends back { perSecond }.
 */
import { Pool } from 'undici';

async function main() {
  const [url, countArg, concurrencyArg] = process.argv.slice(2);
  const count = Number(countArg);
  const concurrency = Number(concurrencyArg);
  const origin = new URL(url!);
  const pool = new Pool(origin.origin, { connections: concurrency });
  const body = JSON.stringify({ id: 'evt_raw', type: 'raw.post', data: {} });
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const res = await pool.request({ path: origin.pathname, method: 'POST', body, headers: { 'content-type': 'application/json' } });
        await res.body.dump();
      }
    }),
  );
  const perSecond = count / ((performance.now() - start) / 1000);
  await pool.close();
  process.send!({ perSecond });
  process.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
