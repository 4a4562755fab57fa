/** Reads for the merchant's viewer: one page of transactions, or one with its events and attempts. */
import type { Transaction, TransactionDetail, TransactionPage, ViewTransactionQuery } from '@dw/contracts';
import { LIST_LIMIT_DEFAULT } from '@dw/contracts';
import type pg from 'pg';
import { join, query, raw, sql, type Sql } from '@dw/db';
import { entriesOfTransaction } from './balance-queries';
import { BadCursorError, decodeCursor, encodeCursor } from './cursor';

export { BadCursorError };
import { iso, transactionJson } from './transaction-sql';

/** The list's filters (not the cursor) as SQL conditions on `transactions t`; the export uses them too. */
export function filterConditions(merchantId: string, q: ViewTransactionQuery): Sql[] {
  const where: Sql[] = [sql`t.merchant_id = ${merchantId}::uuid`];
  if (q.type) where.push(sql`t.type = ${q.type}::transaction_type`);
  if (q.status) where.push(sql`t.status = ${q.status}::transaction_status`);
  // Without a type, both types are named so that the lookup is two probes of the unique
  // (merchant_id, type, order_id) index; naming none walked every entry of the merchant in it.
  if (q.orderId) {
    if (!q.type) where.push(raw(`t.type = ANY('{deposit,withdraw}'::transaction_type[])`));
    where.push(sql`t.order_id = ${q.orderId}`);
  }
  if (q.from) where.push(sql`t.created_at >= ${q.from}::timestamptz`);
  if (q.to) where.push(sql`t.created_at < ${q.to}::timestamptz`);
  return where;
}

/** The statement of one page of the list: `limit + 1` rows, so that the last says whether another page follows. */
export function listPageStatement(merchantId: string, q: ViewTransactionQuery): Sql {
  const where = filterConditions(merchantId, q);
  if (q.cursor) {
    const pos = decodeCursor(q.cursor);
    if (!pos) throw new BadCursorError();
    where.push(sql`(t.created_at, t.id) < (${pos.createdAt}::timestamptz, ${pos.id}::uuid)`);
  }
  return sql`
    SELECT ${transactionJson('t')} AS tx FROM transactions t
    WHERE ${join(where, ' AND ')}
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT ${(q.limit ?? LIST_LIMIT_DEFAULT) + 1}`;
}

export async function listTransactions(
  db: pg.Pool,
  merchantId: string,
  q: ViewTransactionQuery,
): Promise<TransactionPage> {
  const limit = q.limit ?? LIST_LIMIT_DEFAULT;
  const rows = await query<{ tx: Transaction }>(db, listPageStatement(merchantId, q));
  const items = rows.slice(0, limit).map((r) => r.tx);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
  return { items, nextCursor };
}

/**
 * The viewer's delivery object (docs/api.md#viewing-transactions) of the event whose id is the SQL expression `eventId`,
 * with `status` (NULL reads as pending); attempts in attempt order, each with its trigger.
 */
export function deliveryJson(eventId: string, status: string): Sql {
  return raw(`json_build_object(
             'status', COALESCE(${status}::text, 'pending'),
             'attempts', COALESCE((
               SELECT json_agg(json_build_object(
                        'attempt', a.attempt,
                        'at', ${iso('a.at')},
                        'statusCode', a.status_code, 'error', a.error, 'durationMs', a.duration_ms,
                        'url', a.url, 'trigger', a.trigger)
                      ORDER BY a.attempt, a.id)
               FROM callback_attempts a WHERE a.event_id = ${eventId}), '[]'::json)
           )`);
}

export async function transactionDetail(
  db: pg.Pool,
  merchantId: string,
  id: string,
): Promise<TransactionDetail | undefined> {
  const transaction = sql`
    SELECT ${transactionJson('t')} AS tx, t.traceparent, (${entriesOfTransaction(id)}) AS entries FROM transactions t
    WHERE t.id = ${id}::uuid AND t.merchant_id = ${merchantId}::uuid`;
  const [row] = await query<{ tx: Transaction; traceparent: string | null; entries: TransactionDetail['ledgerEntries'] }>(db, transaction);
  if (!row) return undefined;
  const history = sql`
    SELECT e.id, e.type,
           ${raw(iso('e.created_at'))} AS "createdAt",
           ${deliveryJson('e.id', 'd.status')} AS delivery
    FROM transaction_events e
    LEFT JOIN callback_deliveries d ON d.event_id = e.id
    WHERE e.transaction_id = ${id}::uuid
    ORDER BY e.sequence`;
  const events = await query<TransactionDetail['events'][number]>(db, history);
  const traceId = row.traceparent?.split('-')[1] ?? null;
  return { transaction: row.tx, events, ledgerEntries: row.entries, traceId };
}
