/**
 * Isolation from a merchant's list pages (docs/decisions.md, "Bounded requests"): merchant A holds
 * 150 of the largest rows the API admits and reads 100-row JSON pages of them (about 3.3 MB each) in
 * 16 loops, while merchant B creates a deposit every 50 ms. Rounds alternate B alone (A idle, the
 * baseline) and B beside A's reader (ours) on one stack; the row is B's create latency on each side.
 * The stack's rate limit is far above A's rate, so what bounds A is the gateway's page share
 * (GATEWAY_MERCHANT_PAGE_CONCURRENCY). B's creates are sent and timed by the open-loop generator in
 * its own process; A's loops run in the bench process and count each page's bytes without parsing.
 */
import { Pool } from 'undici';
import { api, skippedDeliveries, type Stack } from '../../e2e/test/support/stack';
import { bAloneAndBeside } from './beside-b';
import { merchantWithCallback, sleep, stackRss, startBenchStack, type Ctx, type Row } from './context';
import { fmt, median } from './stats';

export const ROWS = 150;
export const LOOPS = 16;
const PAGE = '/ui/viewTransaction?limit=100';
const EURO = '€';

/** The largest deposit the contract admits: 500 characters of description, 20 keys of 39 with 500 each. */
const largestDeposit = (orderId: string) => ({
  amount: '1.00',
  currency: 'USD',
  orderId,
  description: EURO.repeat(500),
  metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key-${String(i).padStart(2, '0')}-`.padEnd(39, 'x'), EURO.repeat(500)])),
});

export interface Reading {
  pages: number;
  other: number;
  bytes: number;
  seconds: number;
}

/** `loops` loops, each asking for a page, reading its whole body and asking again, until `until` settles. */
export async function readPages(pool: Pool, token: string, until: Promise<unknown>, loops = LOOPS): Promise<Reading> {
  const out: Reading = { pages: 0, other: 0, bytes: 0, seconds: 0 };
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!done) {
        try {
          const res = await pool.request({ path: PAGE, method: 'GET', headers: { serviceApiToken: token, accept: 'application/json' } });
          let bytes = 0;
          for await (const chunk of res.body) bytes += (chunk as Buffer).length;
          if (res.statusCode === 200) {
            out.pages++;
            out.bytes += bytes;
          } else out.other++;
        } catch {
          out.other++;
        }
      }
    }),
  );
  out.seconds = (performance.now() - start) / 1000;
  return out;
}

/** ROWS of the largest deposits for `m`, created through the API; returns when their deliveries end skipped (m has no URL). */
export async function seedLargestRows(stack: Stack, m: { apiToken: string; merchantId: string }): Promise<void> {
  const call = api(stack, m.apiToken);
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < ROWS) {
        const res = await call('POST', '/api/createDeposit', largestDeposit(`pages-a-${next++}`));
        if (res.status !== 201) throw new Error(`createDeposit (largest): ${res.status} ${res.text.slice(0, 200)}`);
      }
    }),
  );
  await skippedDeliveries(stack, m.merchantId, ROWS);
}

export async function pageIsolationFigure(ctx: Ctx): Promise<Row> {
  const { quick } = ctx.opts;
  const stack = await startBenchStack('pages');
  const reader = new Pool(stack.gateway, { connections: LOOPS });
  const rss = stackRss(stack).start();
  try {
    // A's deliveries end skipped (no URL) before the rounds; B's go to the receiver.
    const a = await merchantWithCallback(stack, null, 'Merchant A');
    const b = await merchantWithCallback(stack, '/ok/pages-b', 'Merchant B');
    ctx.log(`pages: A creates ${ROWS} of the largest deposits through the API`);
    await seedLargestRows(stack, a);
    // Warm A's reads (JIT, pools, plans) outside the measured rounds; B warms in bAloneAndBeside.
    await readPages(reader, a.apiToken, sleep(2000));

    // A reads from before B's generator has started until B's last create is answered.
    const run = await bAloneAndBeside(
      ctx,
      stack,
      b,
      { path: 'pages-b', label: 'pages', what: `A's ${LOOPS} page loops`, baseline: 'A idle', rounds: quick ? 2 : 3, seconds: quick ? 5 : 10 },
      (created) => readPages(reader, a.apiToken, created),
    );
    const readings = run.loads;
    const pages = readings.reduce((n, r) => n + r.pages, 0);
    const bytes = readings.reduce((n, r) => n + r.bytes, 0);
    const refused = readings.reduce((n, r) => n + r.other, 0);
    return {
      figure: "Isolation: A reads pages of its largest rows, B's create latency",
      ...run.columns,
      rss: rss.stop(),
      note:
        `${run.noteOnB}; ` +
        `A: ${ROWS} of the largest rows, ${LOOPS} loops of ${PAGE} as JSON (${fmt(pages ? bytes / pages / 1e6 : Number.NaN)} MB a page): ` +
        `${fmt(median(readings.map((r) => r.pages / r.seconds)))} pages/s, ${fmt(median(readings.map((r) => r.bytes / 1e6 / r.seconds)))} MB/s beside B` +
        (refused ? `; ${refused} of A's pages not 200` : ''),
    };
  } finally {
    rss.stop();
    await reader.close();
    await stack.close({ verifyLedger: false });
  }
}
