/**
 * Writes and reads of transactions. Every write goes through withEventsFor, so no status can change
 * without its event, delivery row and outbox message.
 */
import type { Transaction, TransactionStatusName, TransactionTypeName } from '@dw/contracts';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { ALLOWED_FROM } from './state-machine';
import { sqlPool } from '../db/prisma';
import { ringOutboxDoorbell } from '../outbox/doorbell';
import { transactionJson, withEventsFor } from './transaction-sql';

/**
 * Runs a withEventsFor statement on the client's pg pool (the hot path: see sqlPool); when it wrote
 * events (and so outbox rows), wakes the relay.
 */
async function writeWithEvents(db: PrismaClient, sql: Prisma.Sql): Promise<{ tx: Transaction }[]> {
  const { rows } = await sqlPool(db).query<{ tx: Transaction }>({ text: sql.text, values: sql.values as unknown[] });
  if (rows.length > 0) ringOutboxDoorbell();
  return rows;
}

export interface NewTransaction {
  merchantId: string;
  type: TransactionTypeName;
  amount: string;
  currency: string;
  orderId: string;
  description: string | null;
  metadata: Record<string, string>;
  destination: string | null;
  traceparent: string | null;
}

export type CreateOutcome =
  | { kind: 'created'; transaction: Transaction }
  | { kind: 'replayed'; transaction: Transaction }
  | { kind: 'conflict'; transaction: Transaction };

export async function createTransaction(db: PrismaClient, t: NewTransaction): Promise<CreateOutcome> {
  const metadata = JSON.stringify(t.metadata);
  const insert = Prisma.sql`
    INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, description, metadata,
                              destination, last_sequence, traceparent, created_at, updated_at)
    VALUES (gen_random_uuid(), ${t.merchantId}::uuid, ${t.type}::transaction_type, 'pending', ${t.amount}::numeric,
            ${t.currency}, ${t.orderId}, ${t.description}, ${metadata}::jsonb, ${t.destination}, 1, ${t.traceparent},
            now(), now())
    ON CONFLICT (merchant_id, type, order_id) DO NOTHING
    RETURNING *`;
  const created = await writeWithEvents(db, withEventsFor(insert, null, t.traceparent));
  if (created[0]) return { kind: 'created', transaction: created[0].tx };

  // The orderId is taken (perhaps by a concurrent identical request that just committed): replay
  // when every field is the same by value, else conflict.
  const [existing] = await db.$queryRaw<{ tx: Transaction; same: boolean }[]>`
    SELECT ${transactionJson('t')} AS tx,
           (t.amount = ${t.amount}::numeric AND t.currency = ${t.currency}
            AND t.description IS NOT DISTINCT FROM ${t.description}::text
            AND t.metadata = ${metadata}::jsonb
            AND t.destination IS NOT DISTINCT FROM ${t.destination}::text) AS same
    FROM transactions t
    WHERE t.merchant_id = ${t.merchantId}::uuid AND t.type = ${t.type}::transaction_type AND t.order_id = ${t.orderId}`;
  if (!existing) throw new Error('orderId conflict reported but no row found');
  return { kind: existing.same ? 'replayed' : 'conflict', transaction: existing.tx };
}

export type ChangeOutcome =
  | { kind: 'changed'; transaction: Transaction }
  | { kind: 'not_found' }
  | { kind: 'refused'; current: TransactionStatusName };

/** Moves one transaction (operator API); merchantId scopes it when given. */
export async function changeStatus(
  db: PrismaClient,
  id: string,
  to: keyof typeof ALLOWED_FROM,
  reason: string | null,
  traceparent: string | null,
): Promise<ChangeOutcome> {
  const from = ALLOWED_FROM[to];
  const update = Prisma.sql`
    UPDATE transactions SET status = ${to}::transaction_status, last_sequence = last_sequence + 1, updated_at = now()
    WHERE id = ${id}::uuid AND status = ANY(${from}::transaction_status[])
    RETURNING *`;
  const [row] = await writeWithEvents(db, withEventsFor(update, reason, traceparent));
  if (row) return { kind: 'changed', transaction: row.tx };
  const [current] = await db.$queryRaw<{ status: TransactionStatusName }[]>`
    SELECT status::text AS status FROM transactions WHERE id = ${id}::uuid`;
  return current ? { kind: 'refused', current: current.status } : { kind: 'not_found' };
}

/**
 * Sandbox: settles pending transactions older than settleMs — failed when the amount's fraction is
 * exactly .66, else completed. SKIP LOCKED lets several replicas settle side by side.
 */
export async function settleDue(db: PrismaClient, settleMs: number, batch = 100): Promise<number> {
  const update = Prisma.sql`
    UPDATE transactions t
    SET status = (CASE WHEN t.amount - trunc(t.amount) = 0.66 THEN 'failed' ELSE 'completed' END)::transaction_status,
        last_sequence = t.last_sequence + 1, updated_at = now()
    FROM (SELECT id FROM transactions
          WHERE status = 'pending' AND created_at <= now() - make_interval(secs => ${settleMs / 1000}::float8)
          ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) due
    WHERE t.id = due.id
    RETURNING t.*`;
  const rows = await writeWithEvents(db, withEventsFor(update, 'sandbox settlement', null));
  return rows.length;
}
