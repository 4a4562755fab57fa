/**
 * Every combination of the list's filters reads the rows it returns, not the merchant's history
 * (the standard: no merchant-facing read may scan rows that accumulate). The statements are the
 * product's own (the list's page, the export's count and the export's page), run under
 * EXPLAIN (ANALYZE, BUFFERS) beside a history that grows from 30,000 to 100,000 transactions.
 *
 * The history is built to find a filter that walks it: every (type, status) pair has 3 old rows,
 * and above them the history alternates completed deposits and failed withdraws. So
 * `type=deposit&status=failed` has many rows of its type and many of its status but only its 3
 * old rows of both: through the type index or the status index alone it walks one of the two sets.
 * Another merchant's pending transactions grow beside it, so that no read may walk other merchants'
 * rows either (the sandbox settler's index holds every merchant's pending transactions). Every
 * transaction has its event and the event's delivery, as the service writes them.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ViewTransactionQuery } from '@dw/contracts';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { query, type Sql } from '@dw/db';
import { listPageStatement } from '../../src/domain/transaction-queries';
import { exportCountStatement, exportPageStatement } from '../../src/domain/transaction-export';

const TYPES = ['deposit', 'withdraw'] as const;
const STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
const OLD_ROWS_PER_PAIR = 3;
/** The old rows lie 30 days back; the history above them within the last 20 days. */
const OLD_WINDOW_END = new Date(Date.now() - 25 * 86_400_000).toISOString();

let db: TestDatabase;
let pool: pg.Pool;
const merchantId = randomUUID();
const otherMerchantId = randomUUID();
let seeded = 0;

beforeAll(async () => {
  db = await createTestDatabase('filter_cost');
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await pool.query(
    `INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret, credit_limit)
     VALUES ($1, 'Filters', repeat('a', 64), 'whsec_c2VjcmV0', 100), ($2, 'Other', repeat('b', 64), 'whsec_c2VjcmV0', 100)`,
    [merchantId, otherMerchantId],
  );
  let n = 0;
  for (const type of TYPES) {
    for (const status of STATUSES) {
      for (let i = 0; i < OLD_ROWS_PER_PAIR; i++) {
        n++;
        await pool.query(
          `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
           VALUES (gen_random_uuid(), $1, $2, $3, 1.00, 'USD', $4, '{}', 1, now() - interval '30 days' + $5 * interval '1 second', now())`,
          [merchantId, type, status, `old-${type}-${status}-${i}`, n],
        );
      }
    }
  }
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/**
 * Completed deposits and failed withdraws of the merchant, alternating, each batch older than the last
 * but newer than the old rows; and a third as many pending deposits of the other merchant.
 */
async function growHistoryTo(total: number): Promise<void> {
  const insert = `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)`;
  await pool.query(
    `${insert}
     SELECT gen_random_uuid(), $1, CASE WHEN g % 2 = 0 THEN 'deposit' ELSE 'withdraw' END::transaction_type,
            CASE WHEN g % 2 = 0 THEN 'completed' ELSE 'failed' END::transaction_status,
            1.00, 'USD', 'h-' || g, '{}', 1, now() - g * interval '10 milliseconds', now()
       FROM generate_series($2::int + 1, $3::int) g`,
    [merchantId, seeded, total],
  );
  await pool.query(
    `${insert}
     SELECT gen_random_uuid(), $1, 'deposit', 'pending', 1.00, 'USD', 'p-' || g, '{}', 1, now() - g * interval '30 milliseconds', now()
       FROM generate_series($2::int / 3 + 1, $3::int / 3) g`,
    [otherMerchantId, seeded, total],
  );
  await pool.query(
    `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
     SELECT 'evt_' || md5(t.id::text), t.id, t.merchant_id, 1, t.type || '.' || t.status, t.status, '{}', t.created_at
       FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM transaction_events e WHERE e.transaction_id = t.id)`,
  );
  await pool.query(
    `INSERT INTO callback_deliveries (event_id, status, attempt_count)
     SELECT e.id, 'succeeded', 1 FROM transaction_events e WHERE NOT EXISTS (SELECT 1 FROM callback_deliveries d WHERE d.event_id = e.id)`,
  );
  await pool.query('VACUUM ANALYZE transactions, transaction_events, callback_deliveries');
  seeded = total;
}

/** Every combination: no type or either, no status or any, alone or with an order ID or an old window. */
function combinations(): Record<string, ViewTransactionQuery> {
  const out: Record<string, ViewTransactionQuery> = {};
  for (const type of [undefined, ...TYPES]) {
    for (const status of [undefined, ...STATUSES]) {
      const q: ViewTransactionQuery = { ...(type && { type }), ...(status && { status }), limit: 20 };
      const name = [type && `type=${type}`, status && `status=${status}`].filter(Boolean).join('&') || '(none)';
      out[name] = q;
      out[`${name}&orderId`] = { ...q, orderId: `old-${type ?? 'deposit'}-${status ?? 'failed'}-1` };
      out[`${name}&to=<old rows>`] = { ...q, to: OLD_WINDOW_END };
    }
  }
  return out;
}

const STATEMENTS: Record<string, (q: ViewTransactionQuery) => Sql> = {
  'list page': (q) => listPageStatement(merchantId, q),
  "export's count": (q) => exportCountStatement(merchantId, q),
  "export's page": (q) => exportPageStatement(merchantId, q, { asOf: new Date().toISOString() }, 20),
};

/** Buffer pages the statement reads (shared hits and reads), planned and run as the service runs it; `setup` runs first, rolled back after. */
async function pagesOf(statement: Sql, setup?: string): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    if (setup) await client.query(setup);
    const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, values: statement.values as unknown[] });
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

interface Reading {
  pages: number;
  /** What the statement answered: its rows, or the export's count. */
  answer: number;
}

async function readEach(setup?: string): Promise<Record<string, Reading>> {
  const out: Record<string, Reading> = {};
  for (const [filter, q] of Object.entries(combinations())) {
    for (const [name, statement] of Object.entries(STATEMENTS)) {
      const rows = await query<{ n?: number }>(pool, statement(q));
      out[`${name}, ${filter}`] = { pages: await pagesOf(statement(q), setup), answer: rows[0]?.n ?? rows.length };
    }
  }
  return out;
}

/** The merchant's 6 pending transactions, planned without the statistics of merchant and status together. */
const pendingPage = () => listPageStatement(merchantId, { status: 'pending', limit: 20 });
const WITHOUT_STATUS_STATISTICS = 'DROP STATISTICS transactions_merchant_id_status_stats';

const WITHOUT_BOTH_INDEX = 'DROP INDEX transactions_merchant_id_type_status_created_at_id_idx';

it('reads as many pages for every filter combination at 100,000 transactions of history as at 30,000', async () => {
  await growHistoryTo(30_000);
  const small = await readEach();
  const smallWithout = await readEach(WITHOUT_BOTH_INDEX);
  const smallUnjudged = await pagesOf(pendingPage(), WITHOUT_STATUS_STATISTICS);
  await growHistoryTo(100_000);
  const large = await readEach();
  const largeWithout = await readEach(WITHOUT_BOTH_INDEX);
  const largeUnjudged = await pagesOf(pendingPage(), WITHOUT_STATUS_STATISTICS);

  // The export's count reads what it counts, up to its cap (EXPORT_MAX_ROWS): where it counts more
  // rows, it may read more. Every page, and every count of rows that did not grow, reads as before,
  // give or take a B-tree level: the export's page looks up each row's event, delivery and attempts,
  // and each of those indexes may grow a level between the two sizes (a page more per row and index).
  // A walk of the history reads 3.3 times as much.
  const allowed = (k: string) => Math.max(small[k]!.pages * 1.1, small[k]!.pages + 3, k.startsWith("export's page") ? small[k]!.pages + 3 + 3 * small[k]!.answer : 0);
  const grown = Object.keys(small)
    .filter((k) => large[k]!.answer === small[k]!.answer)
    .filter((k) => large[k]!.pages > allowed(k))
    .map((k) => `${k}: ${small[k]!.pages} -> ${large[k]!.pages} pages`);
  expect(grown).toEqual([]);
  // Only counts answered differently, and each of them grew with its filter's rows.
  const answeredDifferently = Object.keys(small).filter((k) => large[k]!.answer !== small[k]!.answer);
  expect(answeredDifferently.every((k) => k.startsWith("export's count, "))).toBe(true);
  expect(answeredDifferently).toContain("export's count, (none)");

  // The control: without the (merchant, type, status, …) index the same measurement sees a type and a
  // status together walk the history, for each of the two pairs the history holds many of each but none of.
  for (const pair of ['type=deposit&status=failed', 'type=withdraw&status=completed']) {
    for (const name of Object.keys(STATEMENTS)) {
      const k = `${name}, ${pair}`;
      expect([k, largeWithout[k]!.pages > 2.5 * smallWithout[k]!.pages]).toEqual([k, true]);
    }
  }
  console.log(
    `pages read at 30,000 -> 100,000 transactions (without the (merchant, type, status, …) index, or the statistics):\n` +
      ['type=deposit&status=failed', 'type=withdraw&status=completed', 'status=pending']
        .flatMap((f) => Object.keys(STATEMENTS).map((name) => `${name}, ${f}`))
        .map((k) => `  ${k}: ${small[k]!.pages} -> ${large[k]!.pages} (${smallWithout[k]!.pages} -> ${largeWithout[k]!.pages})`)
        .join('\n') + `\n  list page, status=pending without the statistics: ${smallUnjudged} -> ${largeUnjudged}`,
  );
  // And without the statistics of merchant and status together, the planner judged that this
  // merchant, with most of the rows, had many pending ones: a page of its 6 walked the other
  // merchant's pending transactions through the sandbox settler's index (254 -> 996 pages when first seen).
  expect({ smallUnjudged, largeUnjudged, walked: largeUnjudged > 2.5 * smallUnjudged }).toEqual({ smallUnjudged, largeUnjudged, walked: true });
}, 120_000);

it('returns the old rows of a type and a status together, newest first', async () => {
  const rows = await query<{ tx: { orderId: string } }>(pool, listPageStatement(merchantId, { type: 'deposit', status: 'failed', limit: 20 }));
  expect(rows.map((r) => r.tx.orderId)).toEqual(['old-deposit-failed-2', 'old-deposit-failed-1', 'old-deposit-failed-0']);
});
