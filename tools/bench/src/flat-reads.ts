/**
 * Issue 16 §3's figures: a merchant's reads whose cost used to grow with its history, timed through
 * the gateway by one sequential client on the stack with history and on the empty stack, rounds
 * alternated. On each stack the merchant has 5 failed deposits (their deliveries skipped: no URL)
 * and HEALTH_MAX_EVENTS settled ones of the last minutes (so endpoint health counts as many events
 * on both sides: what must not grow is the cost beyond its cap); on the history stack it also has
 * `count` older settled deposits inside the last 24 hours, what endpoint health and a recovery
 * window read. Target: baseline ms ÷ history ms ≥ 0.9.
 */
import pg from 'pg';
import { HEALTH_MAX_EVENTS } from '@dw/contracts';
import { merchantWithFailedDeposits, seedMerchantHistory } from '../../e2e/test/support/seed-history';
import { api, type Stack } from '../../e2e/test/support/stack';
import type { Ctx, Row } from './context';
import { alternate, fmt, median, percentile, ratio } from './stats';

interface Read {
  name: string;
  /** One request; resolves when the whole body has arrived. */
  send(stack: Stack, token: string): Promise<void>;
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const DAY = 86_400_000;

async function expectOk(res: { status: number; text: string }, what: string) {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
}

const READS: Read[] = [
  { name: 'GET /ui/endpointHealth', send: async (s, t) => expectOk(await api(s, t)('GET', '/ui/endpointHealth', undefined, { accept: 'application/json' }), 'health') },
  {
    // Thirteen days back to two hours ago: on the history stack, 20 hours of settled deliveries and nothing to recover.
    name: 'POST /api/recoverCallbacks (recovers 0)',
    send: async (s, t) => expectOk(await api(s, t)('POST', '/api/recoverCallbacks', { since: ago(13 * DAY), until: ago(2 * 3600_000) }), 'recover'),
  },
  {
    name: 'list status=failed (5 match), JSON',
    send: async (s, t) => expectOk(await api(s, t)('GET', '/ui/viewTransaction?status=failed', undefined, { accept: 'application/json' }), 'list'),
  },
  {
    name: 'list status=failed (5 match), CSV',
    send: async (s, t) => expectOk(await api(s, t)('GET', '/ui/viewTransaction?status=failed', undefined, { accept: 'text/csv' }), 'csv'),
  },
];

async function timed(read: Read, stack: Stack, token: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await read.send(stack, token);
    out.push(performance.now() - t0);
  }
  return out;
}

export async function flatReadsFigure(ctx: Ctx, empty: Stack, full: Stack, count: number, label: string): Promise<Row[]> {
  const { quick } = ctx.opts;
  const rounds = quick ? 2 : 3;
  const perRound = quick ? 10 : 20;
  const me = await merchantWithFailedDeposits(empty, 'Flat reads');
  const mf = await merchantWithFailedDeposits(full, 'Flat reads');
  ctx.log(`flat reads: seeding ${HEALTH_MAX_EVENTS} recent deposits on each stack, ${count} older ones of the last 24 hours on one`);
  const seed = async (stack: Stack, merchantId: string, history: number): Promise<number> => {
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const recent = { merchantId, status: 'completed', delivery: 'succeeded', replica: true } as const;
      let secs = await seedMerchantHistory(db, { ...recent, count: HEALTH_MAX_EVENTS, prefix: 'recent', newest: `now() - interval '1 minute'`, stepMs: 10 });
      if (history > 0) {
        secs += await seedMerchantHistory(db, {
          ...recent, count: history, prefix: 'reads', newest: `now() - interval '20 minutes'`, stepMs: Math.floor((22 * 3600_000) / history),
        });
      }
      await db.query('VACUUM ANALYZE');
      return secs;
    } finally {
      await db.end();
    }
  };
  await seed(empty, me.merchantId, 0);
  const secs = await seed(full, mf.merchantId, count);
  const rows: Row[] = [];
  for (const read of READS) {
    // Warm both sides (connections, plans, caches) outside the measured rounds.
    await timed(read, empty, me.apiToken, 3);
    await timed(read, full, mf.apiToken, 3);
    const { a, b } = await alternate(
      rounds,
      (round) => (ctx.log(`flat reads ${read.name}: round ${round + 1}/${rounds} empty`), timed(read, empty, me.apiToken, perRound)),
      (round) => (ctx.log(`flat reads ${read.name}: round ${round + 1}/${rounds} ${label}`), timed(read, full, mf.apiToken, perRound)),
    );
    const e = a.flat();
    const f = b.flat();
    const [em, fm] = [median(e), median(f)];
    rows.push({
      figure: `Flat cost: ${read.name}, ${label} in 24 h vs none`,
      ours: `${fmt(fm)} ms`,
      baseline: `${fmt(em)} ms (none)`,
      ratio: fmt(ratio(em, fm)),
      chartRatio: ratio(em, fm),
      chartTarget: 0.9,
      oursLatency: `${fmt(fm)} / ${fmt(percentile(f, 99))}`,
      baselineLatency: `${fmt(em)} / ${fmt(percentile(e, 99))}`,
      note: `one sequential client through the gateway, ${rounds}×${perRound} requests per side, median; both sides also hold 5 failed and ${HEALTH_MAX_EVENTS} recent deposits; ratio = none ÷ history; ${count} rows seeded in ${secs.toFixed(0)} s`,
    });
  }
  return rows;
}
