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
import { createTestDatabase, type TestDatabase } from '../support/database';

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
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
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

/** Index pages of this database dirtied by `count` creates made right after a checkpoint (which leaves no page dirty). */
async function pagesDirtiedByCreates(count: number): Promise<Record<string, number>> {
  await pool.query('CHECKPOINT');
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
       FROM pg_buffercache b
       JOIN pg_class c ON b.relfilenode = pg_relation_filenode(c.oid)
      WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND b.isdirty AND c.relname = ANY($1)
      GROUP BY 1`,
    [KEYED_INDEXES],
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

it('dirties as few index pages for 200 creates with 60,000 transactions of history as with 5,000', async () => {
  await growHistoryTo(5_000);
  const small = await pagesDirtiedByCreates(200);
  await growHistoryTo(60_000);
  const large = await pagesDirtiedByCreates(200);

  // The measurement sees every index being written to.
  for (const index of KEYED_INDEXES) expect([index, small[index]! > 0, large[index]! > 0]).toEqual([index, true, true]);
  // Random ids would spread the same 200 rows over about a hundred more leaves of each index.
  const grown = KEYED_INDEXES.filter((index) => large[index]! > small[index]! + 4).map((index) => `${index}: ${small[index]} -> ${large[index]} pages`);
  expect(grown).toEqual([]);
}, 60_000);
