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
import { merchantWithCallback, sleep, stackRss, startBenchStack, type Ctx, type Row } from './context';
import { openLoop, type LoadResult } from './processes';
import { alternate, fmt, median, ratio } from './stats';

export const ROWS = 150;
export const LOOPS = 16;
const CREATE_EVERY_MS = 50;
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
  const rounds = quick ? 2 : 3;
  const seconds = quick ? 5 : 10;
  const stack = await startBenchStack('pages');
  const reader = new Pool(stack.gateway, { connections: LOOPS });
  const rss = stackRss(stack).start();
  try {
    // A's deliveries end skipped (no URL) before the rounds; B's go to the receiver.
    const a = await merchantWithCallback(stack, null, 'Merchant A');
    const b = await merchantWithCallback(stack, '/ok/pages-b', 'Merchant B');
    ctx.log(`pages: A creates ${ROWS} of the largest deposits through the API`);
    await seedLargestRows(stack, a);

    let expected = 0;
    let undrained = 0;
    const creates = (secs: number) => openLoop(stack.gateway, { rate: 1000 / CREATE_EVERY_MS, seconds: secs, token: b.apiToken });
    // Outside the timed part: each round's callbacks delivered before the next round starts.
    const delivered = async (r: LoadResult) => {
      expected += r.ok;
      if (!(await ctx.receiver.waitForIds('pages-b', expected, 30_000))) undrained++;
      return r;
    };
    // Warm both (JIT, pools, plans) outside the measured rounds.
    await delivered(await creates(2));
    await readPages(reader, a.apiToken, sleep(2000));

    const readings: Reading[] = [];
    const { a: alone, b: beside } = await alternate(
      rounds,
      async (round) => (ctx.log(`pages: round ${round + 1}/${rounds} B alone`), delivered(await creates(seconds))),
      async (round) => {
        ctx.log(`pages: round ${round + 1}/${rounds} B beside A's ${LOOPS} page loops`);
        // A reads from before B's generator has started until B's last create is answered.
        const created = creates(seconds);
        const [r, reading] = await Promise.all([created, readPages(reader, a.apiToken, created)]);
        readings.push(reading);
        return delivered(r);
      },
    );
    const p = (rs: LoadResult[], key: 'p50' | 'p99') => median(rs.map((r) => r[key]));
    const [oursP50, oursP99, baseP50, baseP99] = [p(beside, 'p50'), p(beside, 'p99'), p(alone, 'p50'), p(alone, 'p99')];
    const notCreated = [...alone, ...beside].reduce((n, r) => n + r.other, 0);
    const pages = readings.reduce((n, r) => n + r.pages, 0);
    const bytes = readings.reduce((n, r) => n + r.bytes, 0);
    const refused = readings.reduce((n, r) => n + r.other, 0);
    return {
      figure: "Isolation: A reads pages of its largest rows, B's create latency",
      ours: `p99 ${fmt(oursP99)} ms`,
      baseline: `p99 ${fmt(baseP99)} ms (A idle)`,
      ratio: fmt(ratio(oursP99, baseP99)),
      oursLatency: `${fmt(oursP50)} / ${fmt(oursP99)}`,
      baselineLatency: `${fmt(baseP50)} / ${fmt(baseP99)}`,
      rss: rss.stop(),
      note:
        `B: a create every ${CREATE_EVERY_MS} ms (open loop), ${rounds}×${seconds}s rounds a side alternated, median of the rounds; ratio = B's p99 beside A ÷ alone; ` +
        `A: ${ROWS} of the largest rows, ${LOOPS} loops of ${PAGE} as JSON (${fmt(pages ? bytes / pages / 1e6 : Number.NaN)} MB a page): ` +
        `${fmt(median(readings.map((r) => r.pages / r.seconds)))} pages/s, ${fmt(median(readings.map((r) => r.bytes / 1e6 / r.seconds)))} MB/s beside B` +
        (refused ? `; ${refused} of A's pages not 200` : '') +
        (notCreated ? `; ${notCreated} of B's creates not 201` : '') +
        (undrained ? `; ${undrained} rounds' callbacks not all delivered in 30 s` : ''),
    };
  } finally {
    rss.stop();
    await reader.close();
    await stack.close({ verifyLedger: false });
  }
}
