/**
 * Creates must not get costlier as history grows (issue 7, rule 5). Transactions and events are keyed
 * by their ids in every index of the ledger and the delivery bookkeeping; random ids would put each
 * new row on a random leaf of each of those indexes, so the pages a batch of creates dirties (and
 * writes to the WAL in full after every checkpoint) would grow with the history, up to one page per
 * row per index. New ids are time-ordered (uuid_v7, migration 20261123000000): whatever the history
 * holds, a batch's rows land together.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTransaction } from '../../src/domain/transactions-repo';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The indexes a create writes that are keyed by a new id (callback_attempts' is written per attempt, by the same event ids). */
const KEYED_INDEXES = ['transactions_pkey', 'transaction_events_pkey', 'transaction_events_transaction_id_sequence_key', 'callback_deliveries_pkey'];

let db: TestDatabase;
let pool: pg.Pool;
const merchantId = randomUUID();
let seeded = 0;
let batchNo = 0;

beforeAll(async () => {
  db = await createTestDatabase('id_locality');
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  await pool.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
  await pool.query(
    `INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret, credit_limit) VALUES ($1, 'Locality', repeat('a', 64), 'whsec_c2VjcmV0', 100)`,
    [merchantId],
  );
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** History written before time-ordered ids: random uuids and "evt_" + 32 random hex, spread over every index. */
async function growHistoryTo(total: number): Promise<void> {
  const range = `FROM generate_series(${seeded + 1}, ${total}) g`;
  await pool.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
     SELECT md5('t' || g)::uuid, $1, 'deposit', 'completed', 1.00, 'USD', 'old-' || g, '{}', 1, now(), now() ${range}`,
    [merchantId],
  );
  await pool.query(
    `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
     SELECT 'evt_' || md5('e' || g), md5('t' || g)::uuid, $1, 1, 'deposit.completed', 'completed', '{}', now() ${range}`,
    [merchantId],
  );
  await pool.query(`INSERT INTO callback_deliveries (event_id, status, attempt_count) SELECT 'evt_' || md5('e' || g), 'succeeded', 1 ${range}`);
  await pool.query(`INSERT INTO callback_attempts (event_id, attempt, at, status_code, duration_ms) SELECT 'evt_' || md5('e' || g), 1, now(), 200, 3 ${range}`);
  await pool.query('VACUUM ANALYZE transactions, transaction_events, callback_deliveries, callback_attempts');
  seeded = total;
}

/**
 * Index pages that `count` creates wrote to: pages whose LSN (the WAL position of their last change)
 * is past where the WAL stood before the creates. Read from each page itself (pageinspect), so a
 * checkpoint or the background writer flushing dirty buffers meanwhile (the cluster is shared with
 * every other test) changes nothing: counting dirty buffers (pg_buffercache) once saw 0 for an index
 * that had just been written.
 */
async function pagesWrittenByCreates(count: number): Promise<Record<string, number>> {
  const { rows: [start] } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  batchNo++;
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      createTransaction(pool, {
        merchantId,
        type: 'deposit',
        amount: '10.00',
        currency: 'USD',
        orderId: `new-${batchNo}-${i}`,
        description: null,
        metadata: {},
        destination: null,
        traceparent: null,
      }),
    ),
  );
  const { rows } = await pool.query<{ relname: string; pages: number }>(
    `SELECT c.relname, count(*)::int AS pages
       FROM pg_class c
       CROSS JOIN LATERAL generate_series(1, pg_relation_size(c.oid) / current_setting('block_size')::int - 1) AS blk
      WHERE c.relname = ANY($1) AND (page_header(get_raw_page(c.relname::text, blk::int))).lsn > $2::pg_lsn
      GROUP BY 1`,
    [KEYED_INDEXES, start!.lsn],
  );
  return Object.fromEntries(KEYED_INDEXES.map((name) => [name, rows.find((r) => r.relname === name)?.pages ?? 0]));
}

it('gives new transactions and events time-ordered ids (UUID version 7, the time in its first 48 bits)', async () => {
  const before = Date.now();
  const first = await createTransaction(pool, { merchantId, type: 'deposit', amount: '1', currency: 'USD', orderId: 'v7-a', description: null, metadata: {}, destination: null, traceparent: null });
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = await createTransaction(pool, { merchantId, type: 'withdraw', amount: '1', currency: 'USD', orderId: 'v7-b', description: null, metadata: {}, destination: 'acct', traceparent: null });
  const [a, b] = [first, second].map((o) => ('transaction' in o ? o.transaction.id : '')) as [string, string];
  expect(a).toMatch(UUID_V7);
  expect(b).toMatch(UUID_V7);
  expect(a < b).toBe(true);
  const millis = parseInt(a.replace(/-/g, '').slice(0, 12), 16);
  expect(millis).toBeGreaterThanOrEqual(before - 1000);
  expect(millis).toBeLessThanOrEqual(Date.now() + 1000);

  const { rows } = await pool.query<{ id: string }>('SELECT id FROM transaction_events WHERE transaction_id = ANY($1::uuid[]) ORDER BY created_at', [[a, b]]);
  expect(rows).toHaveLength(2);
  for (const { id } of rows) expect(id.replace(/^evt_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/, '$1-$2-$3-$4-$5')).toMatch(UUID_V7);
  expect(rows[0]!.id < rows[1]!.id).toBe(true);
});

it('writes to as few index pages for 200 creates with 60,000 transactions of history as with 5,000', async () => {
  await growHistoryTo(5_000);
  const small = await pagesWrittenByCreates(200);
  await growHistoryTo(60_000);
  const large = await pagesWrittenByCreates(200);

  // The measurement sees every index being written to.
  for (const index of KEYED_INDEXES) expect([index, small[index]! > 0, large[index]! > 0]).toEqual([index, true, true]);
  // Random ids would spread the same 200 rows over about a hundred more leaves of each index.
  const grown = KEYED_INDEXES.filter((index) => large[index]! > small[index]! + 4).map((index) => `${index}: ${small[index]} -> ${large[index]} pages`);
  expect(grown).toEqual([]);
}, 60_000);
