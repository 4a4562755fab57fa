/** Rows as transactions-svc writes them (merchant, transaction, event, pending delivery), by plain SQL. */
import { randomBytes, randomUUID } from 'node:crypto';
import { callbackBody, type CallbackEvent, type Transaction } from '@dw/contracts';
import type { Client, Pool } from 'pg';

export interface TestMerchant {
  id: string;
  secret: string;
}

export async function insertMerchant(
  pool: Pool | Client,
  urls: { deposit?: string | null; withdraw?: string | null } = {},
): Promise<TestMerchant> {
  const id = randomUUID();
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  await pool.query(
    `INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret, deposit_callback_url, withdraw_callback_url)
     VALUES ($1, 'Test merchant', $2, $3, $4, $5)`,
    [id, randomBytes(32).toString('hex'), secret, urls.deposit ?? null, urls.withdraw ?? null],
  );
  return { id, secret };
}

export async function setCallbackUrl(pool: Pool, merchantId: string, type: 'deposit' | 'withdraw', url: string | null): Promise<void> {
  await pool.query(`UPDATE merchants SET ${type}_callback_url = $2 WHERE id = $1`, [merchantId, url]);
}

export interface TestEvent {
  id: string;
  type: string;
  /** The exact bytes the relay publishes: callbackBody() of the event. */
  body: string;
  event: CallbackEvent;
}

/** A transaction in `status` with its event (sequence 1) and the event's pending delivery row. */
export async function insertEvent(
  pool: Pool,
  merchantId: string,
  type: 'deposit' | 'withdraw',
  status: Transaction['status'] = 'pending',
): Promise<TestEvent> {
  const now = new Date().toISOString();
  const data: Transaction = {
    id: randomUUID(),
    type,
    status,
    amount: '100.50',
    currency: 'USD',
    orderId: `order-${randomBytes(6).toString('hex')}`,
    description: 'a "quoted" description – ünïcode',
    metadata: { b: '2', a: '1' },
    destination: type === 'withdraw' ? 'wallet-1' : null,
    createdAt: now,
    updatedAt: now,
  };
  const event: CallbackEvent = { id: `evt_${randomBytes(16).toString('hex')}`, type: `${type}.${status}`, createdAt: now, sequence: 1, data };
  await pool.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, description, metadata, destination, last_sequence, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $11)`,
    [data.id, merchantId, type, status, data.amount, data.currency, data.orderId, data.description, data.metadata, data.destination, now],
  );
  await pool.query(
    `INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
     VALUES ($1, $2, $3, 1, $4, $5, $6, $7)`,
    [event.id, data.id, merchantId, event.type, status, event, now],
  );
  await pool.query(`INSERT INTO callback_deliveries (event_id) VALUES ($1)`, [event.id]);
  return { id: event.id, type: event.type, body: callbackBody(event), event };
}

export interface DeliveryRow {
  status: string;
  attemptCount: number;
  attempts: Array<{ attempt: number; at: Date; url: string | null; statusCode: number | null; error: string | null; durationMs: number }>;
}

export async function deliveryOf(pool: Pool, eventId: string): Promise<DeliveryRow> {
  const d = await pool.query<{ status: string; attempt_count: number }>(
    'SELECT status::text, attempt_count FROM callback_deliveries WHERE event_id = $1',
    [eventId],
  );
  const a = await pool.query(
    `SELECT attempt, at, url, status_code AS "statusCode", error, duration_ms AS "durationMs"
       FROM callback_attempts WHERE event_id = $1 ORDER BY attempt, id`,
    [eventId],
  );
  return { status: d.rows[0]!.status, attemptCount: d.rows[0]!.attempt_count, attempts: a.rows };
}

/**
 * The wait before each retry by the service's own clock: each attempt's recorded start minus the end
 * of the one before (its start plus its duration). A retry is never early by this clock, so tests
 * take their lower bounds from it. The receiver's arrival gaps are not a lower bound: a gap also
 * holds the receiver's own lag in reading the earlier request, which on a loaded machine made a
 * 300 ms wait read tens of ms short. They stay the upper bound: what the merchant saw.
 */
export function waitsBeforeRetries(attempts: DeliveryRow['attempts']): number[] {
  return attempts.slice(1).map((a, i) => a.at.getTime() - (attempts[i]!.at.getTime() + attempts[i]!.durationMs));
}

/** The start (ms) and duration are each kept to the millisecond, so a wait may read up to 2 ms short. */
export const RECORDED_MS = 2;

/** Polls until `check` returns true (deliveries settle asynchronously). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000, stepMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/**
 * `count` deliveries with `status`, each with its transaction and event, written in one statement
 * (thousands at once, for tests of what the hot statements read). Resolves with their event ids.
 */
export async function insertDeliveries(db: Pool | Client, merchantId: string, count: number, status: 'pending' | 'succeeded' = 'pending'): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH tx AS (
       INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'deposit', 'pending', 1, 'USD', $2 || g, 1, now(), now() FROM generate_series(1, $3::int) g
       RETURNING id
     ), ev AS (
       INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
       SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), tx.id, $1, 1, 'deposit.pending', 'pending', '{}'::jsonb, now() FROM tx
       RETURNING id
     )
     INSERT INTO callback_deliveries (event_id, status) SELECT id, $4::delivery_status FROM ev RETURNING event_id AS id`,
    [merchantId, `bulk-${randomUUID()}-`, count, status],
  );
  return rows.map((r) => r.id);
}
