/**
 * Writes a merchant's history straight into a stack's database with generate_series, as the product
 * leaves it for each deposit: the transaction, its event, the event's delivery and (unless skipped)
 * one attempt. Ids are md5s of `prefix` and the row number, so two calls with different prefixes
 * never collide. `replica` skips every trigger while writing (a million rows in a minute or two):
 * use it only for deliveries the triggers have nothing to do with (succeeded ones).
 */
import type pg from 'pg';
import { ADMIN_TOKEN, api, skippedDeliveries, type Merchant, type Stack } from './stack';

export interface HistorySpec {
  merchantId: string;
  count: number;
  /** Distinguishes this batch's ids and order ids. */
  prefix: string;
  /** SQL for the newest row's created_at; row g is `newest - g * stepMs`. */
  newest: string;
  stepMs: number;
  status: 'completed' | 'failed' | 'pending';
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
  if (s.replica) await db.query('SET session_replication_role = replica');
  await db.query('SET synchronous_commit = off');
  try {
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, metadata, last_sequence, created_at, updated_at)
       SELECT ${tx}, $1, 'deposit', $2::transaction_status, 1.00, 'USD', '${p}-' || g, '{}', 1, ${at}, ${at} ${rows}`,
      [s.merchantId, s.status],
    );
    await db.query(
      `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
       SELECT ${evt}, ${tx}, $1::uuid, 1, 'deposit.pending', 'pending',
              jsonb_build_object('id', ${evt}, 'type', 'deposit.pending', 'sequence', 1,
                'data', jsonb_build_object('id', ${tx}, 'type', 'deposit', 'status', 'pending', 'amount', '1.00', 'currency', 'USD')),
              ${at} ${rows}`,
      [s.merchantId],
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
 * entry yet), as the migration that added the ledger entered the history before it
 * (libs/db/prisma/migrations/20261126140945_ledger): each one's creation entry at created_at and,
 * when final, its settlement's at updated_at (or at the chain's last entry, if that is later), continuing the merchant's chain and balances after
 * any entries the product already wrote. Afterwards `ledger:verify` (run by stack.close) has
 * nothing to report. Returns how many entries it wrote.
 */
export async function enterHandWrittenHistory(db: pg.Client, merchantId: string): Promise<number> {
  const res = await db.query(
    `WITH steps AS (
       SELECT t.merchant_id, t.currency, t.id AS transaction_id, t.amount, mv.kind, mv.debit, mv.credit, s.at, s.step
         FROM transactions t
        CROSS JOIN LATERAL (VALUES ('pending'::transaction_status, t.created_at, 0), (t.status, t.updated_at, 1)) AS s(status, at, step)
        CROSS JOIN LATERAL ledger_move(t.type, s.status) mv
        WHERE t.merchant_id = $1 AND (s.step = 0 OR t.status IN ('completed', 'failed'))
          AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)
     ),
     chained AS (
       SELECT st.*,
              greatest(st.at, b.last_entry_at) AS entered_at, -- never dated before the chain's last entry
              coalesce(b.entry_count, 0) + row_number() OVER w AS balance_seq,
              coalesce(b.available, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'available')) OVER w AS available,
              coalesce(b.held, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'held')) OVER w AS held,
              coalesce(b.incoming, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'incoming')) OVER w AS incoming
         FROM steps st
         LEFT JOIN balances b ON b.merchant_id = st.merchant_id AND b.currency = st.currency
       WINDOW w AS (PARTITION BY st.merchant_id, st.currency ORDER BY st.at, st.transaction_id, st.step ROWS UNBOUNDED PRECEDING)
     ),
     entered AS (
       INSERT INTO ledger_entries (merchant_id, currency, balance_seq, id, kind, debit_account, credit_account, amount,
                                   available, held, incoming, transaction_id, reason, created_at)
       SELECT merchant_id, currency, balance_seq, gen_random_uuid(), kind, debit, credit, amount, available, held, incoming,
              transaction_id, 'written by a test as hand-made history', entered_at
         FROM chained
       RETURNING merchant_id, currency, balance_seq, available, held, incoming, created_at
     ),
     last AS (
       SELECT DISTINCT ON (merchant_id, currency) * FROM entered ORDER BY merchant_id, currency, balance_seq DESC
     ),
     balanced AS (
       INSERT INTO balances AS b (merchant_id, currency, available, held, incoming, credit_limit, entry_count, last_entry_at)
       SELECT l.merchant_id, l.currency, l.available, l.held, l.incoming, m.credit_limit, l.balance_seq, l.created_at
         FROM last l JOIN merchants m ON m.id = l.merchant_id
       ON CONFLICT (merchant_id, currency) DO UPDATE
         SET available = excluded.available, held = excluded.held, incoming = excluded.incoming,
             entry_count = excluded.entry_count, last_entry_at = greatest(b.last_entry_at, excluded.last_entry_at)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM entered)::int AS entries, (SELECT count(*) FROM balanced)::int AS balances`,
    [merchantId],
  );
  return res.rows[0].entries as number;
}
