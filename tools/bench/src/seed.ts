/**
 * Writes `count` past transactions straight into a stack's database with generate_series: each a
 * settled deposit with its event, a succeeded delivery and one attempt (and a published outbox row
 * while the schema still has published_at), what the product leaves behind for every transaction.
 * Their ids are random (a uuid, "evt_" + 32 hex), as the product wrote them before its ids were
 * time-ordered: the history a deployment carries, spread over every index new rows go into.
 * session_replication_role=replica skips the foreign-key and NOTIFY triggers while seeding (the rows
 * are consistent by construction), which keeps a million transactions to a minute or two here.
 */
import pg from 'pg';

export async function seedHistory(databaseUrl: string, merchantId: string, count: number): Promise<number> {
  const started = performance.now();
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('SET session_replication_role = replica');
    await db.query('SET synchronous_commit = off');
    const base = `FROM generate_series(1, ${Number(count)}) g`;
    const at = `now() - interval '1 day' - g * interval '1 millisecond'`;
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
       SELECT md5('h' || g)::uuid, $1, 'deposit', 'pending', 1.00, 'USD', 'hist-' || g, '{}', 1, ${at}, ${at} ${base}`,
      [merchantId],
    );
    await db.query(
      `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
       SELECT 'evt_' || md5('e' || g), md5('h' || g)::uuid, $1::uuid, 1, 'deposit.pending', 'pending',
         jsonb_build_object('id', 'evt_' || md5('e' || g), 'type', 'deposit.pending', 'sequence', 1,
           'data', jsonb_build_object('id', md5('h' || g)::uuid, 'merchantId', $1::uuid::text, 'type', 'deposit',
             'status', 'pending', 'amount', '1.00', 'currency', 'USD', 'orderId', 'hist-' || g)), ${at} ${base}`,
      [merchantId],
    );
    await db.query(
      `INSERT INTO callback_deliveries (event_id, status, attempt_count, updated_at)
       SELECT 'evt_' || md5('e' || g), 'succeeded', 1, ${at} ${base}`,
    );
    await db.query(
      `INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, duration_ms)
       SELECT 'evt_' || md5('e' || g), 1, ${at}, 'http://127.0.0.1:9/ok/history', 200, 3 ${base}`,
    );
    // Only while the outbox keeps published rows (a product that deletes them has none in its past).
    const { rowCount } = await db.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'outbox' AND column_name = 'published_at'`,
    );
    if (rowCount) await db.query(
      `INSERT INTO outbox (event_id, routing_key, payload, created_at, published_at)
       SELECT 'evt_' || md5('e' || g), 'deposit.pending', '{}', ${at}, ${at} ${base}`,
    );
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
  return (performance.now() - started) / 1000;
}
