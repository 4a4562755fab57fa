/**
 * Cost must not grow with history (issue: flat cost). With the real processes: the outbox holds
 * only what is still to be published (a published row is deleted), so the relay's claim reads the
 * same few pages after hundreds of transactions as on an empty database; the sandbox settler finds
 * pending transactions through an index that holds pending ones only.
 */
import pg from 'pg';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { api, startStack, type Stack } from './support/stack';

let stack: Stack;
let receiver: CallbackReceiver;
let db: pg.Client;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  stack = await startStack('flat-cost', { RATE_LIMIT_PER_SECOND: '100000' });
  db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await stack?.close({ verifyLedger: false }); // its history is written by hand, without the ledger
  await receiver?.close();
});

/** Pages the relay's claim touches, from EXPLAIN (ANALYZE, BUFFERS) of the statement it runs. */
async function claimPages(): Promise<number> {
  await db.query('BEGIN');
  try {
    const { rows } = await db.query(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
       SELECT id, event_id, routing_key, payload, headers FROM outbox ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED`,
    );
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
  } finally {
    await db.query('ROLLBACK');
  }
}

describe('the outbox', () => {
  it('is empty once every event is published, and a claim reads as few pages after 600 transactions as before the first', async () => {
    const m = stack.createMerchant('Flat cost');
    const call = api(stack, m.apiToken);
    expect((await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/flat` })).status).toBe(200);
    const before = await claimPages();

    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < 600) {
          const res = await call('POST', '/api/createDeposit', { amount: '1.00', currency: 'USD', orderId: `flat-${next++}` });
          expect(res.status).toBe(201);
        }
      }),
    );
    await receiver.waitFor(600, (r) => r.path === '/flat', 60_000);
    expect((await db.query('SELECT count(*)::int AS n FROM outbox')).rows[0].n).toBe(0);
    expect((await db.query('SELECT count(*)::int AS n FROM transaction_events')).rows[0].n).toBe(600);

    await db.query('VACUUM outbox'); // what autovacuum does on its own within a minute
    expect(await claimPages()).toBeLessThanOrEqual(before + 1);
  }, 120_000);
});

describe('the sandbox settler’s lookup', () => {
  it('uses the index of pending transactions, not a scan of all of them', async () => {
    // History as it builds up: 5,000 settled transactions and a few pending, written by SQL.
    const m = stack.createMerchant('Settler history');
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'deposit', CASE WHEN g <= 10 THEN 'pending' ELSE 'completed' END::transaction_status,
              1, 'USD', 'history-' || g, 2, now() - g * interval '1 minute', now()
         FROM generate_series(1, 5000) g`,
      [m.merchantId],
    );
    await db.query('ANALYZE transactions');
    const { rows } = await db.query(
      `EXPLAIN (FORMAT JSON) SELECT id FROM transactions
        WHERE status = 'pending' AND created_at <= now() - interval '3 seconds' ORDER BY created_at LIMIT 100`,
    );
    expect(JSON.stringify(rows[0]['QUERY PLAN'])).toContain('transactions_pending_created_at_idx');
  });
});
