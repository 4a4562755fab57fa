/**
 * A young deployment: PostgreSQL analyzed the tables while they held a handful of rows, and the
 * service has run its statements many times since; then a backlog arrives, faster than autovacuum
 * analyzes again. The claim, the record and the seen mark, called as the service calls them, must
 * still find each delivery by its key, never by scanning callback_deliveries or transaction_events
 * (a plan made once for small tables and kept would do that for every batch as they grow).
 */
import { Pool } from 'pg';
import { claimDeliveries, markSeen, recordOutcomes } from '../src/delivery';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { insertDeliveries, insertMerchant } from './support/fixtures';

let db: TestDatabase;
/** One connection, so that its statistics can be flushed and read back in order. */
let pool: Pool;
let merchantId: string;

beforeAll(async () => {
  db = await createTestDatabase('young_database');
  pool = new Pool({ connectionString: db.url, max: 1 });
  merchantId = (await insertMerchant(pool, { deposit: 'http://127.0.0.1:9/unused' })).id;
  await pool.query('ALTER TABLE callback_deliveries SET (autovacuum_enabled = false)');
  await pool.query('ALTER TABLE transaction_events SET (autovacuum_enabled = false)');
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const openDeliveries = (count: number) => insertDeliveries(pool, merchantId, count);

/** Sequential scans of the two tables so far, as this connection's statistics say once flushed. */
async function seqScans(): Promise<number> {
  await pool.query('SELECT pg_stat_force_next_flush()');
  await pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await pool.query<{ n: string }>(
    `SELECT sum(seq_scan)::text AS n FROM pg_stat_user_tables WHERE relname IN ('callback_deliveries', 'transaction_events')`,
  );
  return Number(rows[0]!.n);
}

const result = (url: string) => ({ outcome: 'succeeded' as const, url, at: new Date(), durationMs: 3, statusCode: 200, error: null });

it('claims, records and marks a batch by key after the tables grew from 20 rows to 7,000 since they were analyzed', async () => {
  const early = await openDeliveries(20);
  await pool.query('ANALYZE callback_deliveries, transaction_events');
  // Many batches on the small tables first: a statement planned once for good would be planned now.
  for (let i = 0; i < 8; i++) {
    const batch = early.slice(i * 2, i * 2 + 2);
    await claimDeliveries(pool, batch.map((eventId) => ({ eventId, attempt: 1 })), 20_000);
    await recordOutcomes(pool, batch.map((eventId) => ({ eventId, attempt: 1, status: 'retrying', result: result('http://x/'), trigger: 'automatic' })));
    await markSeen(pool, batch);
  }

  await openDeliveries(7000);
  const batch = (await openDeliveries(10)).map((eventId) => ({ eventId, attempt: 1 }));
  const before = await seqScans();
  const claims = await claimDeliveries(pool, batch, 20_000);
  await recordOutcomes(pool, batch.map(({ eventId }) => ({ eventId, attempt: 1, status: 'succeeded', result: result('http://x/'), trigger: 'automatic' })));
  await markSeen(pool, batch.map((b) => b.eventId));

  expect(claims.map((c) => c.kind)).toEqual(batch.map(() => 'claimed'));
  expect(await seqScans()).toBe(before);
});
