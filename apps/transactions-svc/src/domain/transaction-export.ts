/**
 * The reconciliation export: every transaction matching the list's filters, newest first, with
 * its latest event's delivery (status, attempts, when a 200 acknowledged it). Read in keyset pages
 * (the list's (created_at, id) index) and yielded row by row, so memory holds one page at most.
 */
import { EXPORT_MAX_ROWS, type ExportRow, type ViewTransactionQuery } from '@dw/contracts';
import type pg from 'pg';
import { join, query, raw, sql, type Sql } from '@dw/db';
import { filterConditions } from './transaction-queries';
import { iso, transactionJson } from './transaction-sql';

const PAGE_ROWS = 1000;

export class ExportTooLargeError extends Error {}

/** How many rows match, counted only up to one past the limit (so the count stays bounded). */
export async function countUpToLimit(db: pg.Pool, merchantId: string, q: ViewTransactionQuery): Promise<number> {
  const where = filterConditions(merchantId, q);
  const count = sql`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM transactions t WHERE ${join(where, ' AND ')} LIMIT ${EXPORT_MAX_ROWS + 1}) x`;
  const [row] = await query<{ n: number }>(db, count);
  return row?.n ?? 0;
}

async function page(db: pg.Pool, where: Sql[]): Promise<ExportRow[]> {
  const onePage = sql`
    SELECT ${transactionJson('t')} AS transaction,
           e.id AS "lastEventId", e.type AS "lastEventType",
           CASE WHEN e.id IS NULL THEN NULL ELSE COALESCE(d.status::text, 'pending') END AS "deliveryStatus",
           COALESCE(a.attempts, 0)::int AS "deliveryAttempts",
           ${raw(iso('a.acked_at'))} AS "acknowledgedAt"
      FROM transactions t
      LEFT JOIN transaction_events e ON e.transaction_id = t.id AND e.sequence = t.last_sequence
      LEFT JOIN callback_deliveries d ON d.event_id = e.id
      LEFT JOIN LATERAL (
        SELECT count(*) AS attempts, min(x.at) FILTER (WHERE x.status_code = 200) AS acked_at
          FROM callback_attempts x WHERE x.event_id = e.id) a ON true
     WHERE ${join(where, ' AND ')}
     ORDER BY t.created_at DESC, t.id DESC
     LIMIT ${PAGE_ROWS}`;
  return query<ExportRow>(db, onePage);
}

export async function* exportRows(db: pg.Pool, merchantId: string, q: ViewTransactionQuery): AsyncGenerator<ExportRow> {
  let after: { createdAt: string; id: string } | undefined;
  let sent = 0;
  while (sent < EXPORT_MAX_ROWS) {
    const where = filterConditions(merchantId, q);
    if (after) where.push(sql`(t.created_at, t.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
    const rows = await page(db, where);
    for (const row of rows.slice(0, EXPORT_MAX_ROWS - sent)) yield row;
    sent += rows.length;
    const last = rows[rows.length - 1];
    if (rows.length < PAGE_ROWS || !last) return;
    after = { createdAt: last.transaction.createdAt, id: last.transaction.id };
  }
}
