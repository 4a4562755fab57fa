/**
 * A download's page reads its page, not the merchant's history, even while the table's statistics
 * lag behind it (a bulk load, a database whose autovacuum has not run yet): the export pool's
 * sessions take EXPORT_SESSION_SETTINGS (main.ts). The statement is the product's own, run under
 * EXPLAIN (ANALYZE, BUFFERS) on a pool made as main.ts makes the export pool, over 100,000 rows that
 * were never analysed.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createPool } from '@dw/db';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { EXPORT_SESSION_SETTINGS, exportPageStatement } from '../../src/domain/transaction-export';

const ROWS = 100_000;
let db: TestDatabase;
const merchantId = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase('export_stale_statistics');
  const setup = createPool(db.url, 1);
  await setup.query('ALTER TABLE transactions SET (autovacuum_enabled = off)');
  await setup.query(`INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret) VALUES ($1, 'Bulk', repeat('a', 64), 'whsec_c2VjcmV0')`, [merchantId]);
  await setup.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'deposit', 'completed', 1.00, 'USD', 'bulk-' || g, '{}', 1, now() - g * interval '1 millisecond', now()
       FROM generate_series(1, $2::int) g`,
    [merchantId, ROWS],
  );
  await setup.end();
});
afterAll(async () => {
  await db?.drop();
});

/** Rows the plan's nodes read from the table (the scans' actual rows), and whether it sorted. */
async function planOf(pool: pg.Pool): Promise<{ rowsRead: number; sorted: boolean }> {
  // A page halfway through the download: below the 50,000th newest row.
  const { rows } = await pool.query<{ created_at: string; id: string }>(
    `SELECT created_at, id FROM transactions WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC OFFSET 50000 LIMIT 1`,
    [merchantId],
  );
  const after = { createdAt: new Date(rows[0]!.created_at).toISOString(), id: rows[0]!.id };
  const statement = exportPageStatement(merchantId, { limit: 20 }, { asOf: new Date(Date.now() + 60_000).toISOString(), after }, 21);
  const explained = await pool.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, values: statement.values as unknown[] });
  let rowsRead = 0;
  let sorted = false;
  const walk = (node: Record<string, unknown>) => {
    if (node['Node Type'] === 'Sort') sorted = true;
    if (node['Relation Name'] === 'transactions') rowsRead += Number(node['Actual Rows']) * Number(node['Actual Loops']);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(explained.rows[0]['QUERY PLAN'][0].Plan);
  return { rowsRead, sorted };
}

describe("a download's page over statistics that lag the table", () => {
  it('reads the page by the index, never the rows below it, on a pool made as the export pool', async () => {
    const pool = createPool(db.url, 1, { settings: EXPORT_SESSION_SETTINGS });
    try {
      expect(await planOf(pool)).toEqual({ rowsRead: 21, sorted: false });
    } finally {
      await pool.end();
    }
  });
});
