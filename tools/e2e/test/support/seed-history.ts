/**
 * Writes a merchant's history straight into a stack's database with generate_series, as the product
 * leaves it for each deposit (or withdraw): the transaction, its event, the event's delivery and (unless skipped)
 * one attempt. Ids are md5s of `prefix` and the row number, so two calls with different prefixes
 * never collide. `replica` skips every trigger while writing (a million rows in a minute or two):
 * use it only for deliveries the triggers have nothing to do with (succeeded ones).
 */
import type pg from 'pg';
import { ADMIN_TOKEN, api, skippedDeliveries, withDatabase, type Merchant, type Stack } from './stack';

export interface HistorySpec {
  merchantId: string;
  count: number;
  /** Distinguishes this batch's ids and order ids. */
  prefix: string;
  /** SQL for the newest row's created_at; row g is `newest - g * stepMs`. */
  newest: string;
  stepMs: number;
  status: 'completed' | 'failed' | 'pending';
  /** 'deposit' unless said. */
  type?: 'deposit' | 'withdraw';
  delivery: 'succeeded' | 'failed' | 'skipped';
  replica?: boolean;
}

export async function seedMerchantHistory(db: pg.Client, s: HistorySpec): Promise<number> {
  const started = performance.now();
  const p = s.prefix.replace(/\W/g, '');
  const tx = `md5('${p}t' || g)::uuid`;
  const evt = `'evt_' || md5('${p}e' || g)`;
  const at = `(${s.newest}) - g * interval '${Number(s.stepMs)} milliseconds'`;
  const rows = `FROM generate_series(1, ${Number(s.count)}) g`;
  const type = s.type ?? 'deposit';
  if (s.replica) await db.query('SET session_replication_role = replica');
  await db.query('SET synchronous_commit = off');
  try {
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
       SELECT ${tx}, $1, $3::transaction_type, $2::transaction_status, 1.00, 'USD', '${p}-' || g, '{}', 1, ${at}, ${at} ${rows}`,
      [s.merchantId, s.status, type],
    );
    await db.query(
      `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
       SELECT ${evt}, ${tx}, $1::uuid, 1, $2 || '.pending', 'pending',
              jsonb_build_object('id', ${evt}, 'type', $2 || '.pending', 'sequence', 1,
                'data', jsonb_build_object('id', ${tx}, 'type', $2::text, 'status', 'pending', 'amount', '1.00', 'currency', 'USD')),
              ${at} ${rows}`,
      [s.merchantId, type],
    );
    await db.query(
      `INSERT INTO callback_deliveries (event_id, status, attempt_count, updated_at)
       SELECT ${evt}, $1::delivery_status, ${s.delivery === 'skipped' ? 0 : 1}, ${at} ${rows}`,
      [s.delivery],
    );
    if (s.delivery !== 'skipped') {
      await db.query(
        `INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, duration_ms)
         SELECT ${evt}, 1, ${at}, 'http://127.0.0.1:9/history', $1::int, 3 ${rows}`,
        [s.delivery === 'succeeded' ? 200 : 500],
      );
    }
  } finally {
    await db.query('RESET session_replication_role');
    await db.query('RESET synchronous_commit');
  }
  return (performance.now() - started) / 1000;
}

/**
 * A new merchant with `count` deposits made through the gateway and failed by the operator. It has
 * no callback URL, so callback-svc marks their 2 × count deliveries skipped; resolves once it has.
 */
export async function merchantWithFailedDeposits(stack: Stack, name: string, count = 5): Promise<Merchant> {
  const m = stack.createMerchant(name);
  const call = api(stack, m.apiToken);
  for (let i = 0; i < count; i++) {
    const tx = (await call('POST', '/api/createDeposit', { amount: '1.00', currency: 'USD', orderId: `failed-${i}` })).json;
    const res = await fetch(`${stack.transactions}/internal/transactions/${tx.id}/status`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'failed' }),
    });
    if (res.status !== 200) throw new Error(`operator status change: ${res.status}`);
  }
  const skipped = await skippedDeliveries(stack, m.merchantId, 2 * count);
  if (skipped < 2 * count) throw new Error(`only ${skipped} of ${2 * count} deliveries skipped in time`);
  return m;
}

/**
 * Enters in the ledger the transactions of `merchantId` that were written by hand (they have no
 * entry yet), as the migration that added the ledger entered the history before it: the SQL
 * function ledger_backfill (libs/db/prisma/migrations/20261126215036_ledger_backfill_function)
 * continues the merchant's chain and balances after any entries the product already wrote.
 * Afterwards `ledger:verify` (run by stack.close) has nothing to report. Returns how many entries
 * it wrote.
 */
export async function enterHandWrittenHistory(db: pg.Client, merchantId: string): Promise<number> {
  const res = await db.query(`SELECT ledger_backfill($1, 'written by a test as hand-made history') AS entries`, [merchantId]);
  return res.rows[0].entries as number;
}

/**
 * `count` deposits of the largest size the contract allows (a 500-character description and 20
 * metadata values of 500 characters, all emoji: about 42 KB each): the first admitted through the
 * API, the rest copies of it written by SQL in a moment (pending, a second apart, older than the
 * first), then entered in the ledger as the product would have.
 */
export async function largestDeposits(stack: Stack, m: Merchant, count: number): Promise<void> {
  const emoji = '😀';
  const largest = {
    amount: '1.00',
    currency: 'USD',
    orderId: 'largest-0',
    description: emoji.repeat(500),
    metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key-${String(i).padStart(2, '0')}`, emoji.repeat(500)])),
  };
  const res = await api(stack, m.apiToken)('POST', '/api/createDeposit', largest);
  if (res.status !== 201) throw new Error(`createDeposit (largest): ${res.status} ${res.text.slice(0, 200)}`);
  await withDatabase(stack, async (db) => {
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, description, metadata, last_sequence, created_at, updated_at)
       SELECT gen_random_uuid(), t.merchant_id, 'deposit', 'pending', 1, 'USD', 'largest-' || g, t.description, t.metadata, 0,
              now() - g * interval '1 second', now()
         FROM transactions t, generate_series(1, ${Number(count) - 1}) g
        WHERE t.id = $1`,
      [res.json.id],
    );
    await enterHandWrittenHistory(db, m.merchantId); // as if the product had written them
  });
}
