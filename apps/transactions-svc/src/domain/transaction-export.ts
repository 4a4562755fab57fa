/**
 * The reconciliation export: every transaction matching the list's filters, newest first, with
 * its latest event's delivery (status, attempts, when a 200 acknowledged it). Read in keyset pages
 * (the list's (created_at, id) index) sized in bytes, not rows: a page holds at most pageBytes of
 * the largest rows the API admits, so what one export holds in memory is bounded whatever the
 * merchant stored. Each page is a short query of its own, so a slow reader holds no database
 * connection between pages.
 *
 * One point in time: the count fixes `asOf` (the database's clock), and the rows are read below it,
 * so rows committed while the file streams never push older ones out of a file that looks complete.
 * Should the cap still be passed (a row committed late with an earlier created_at), the stream fails
 * (ExportTooLargeError) and the download ends abruptly instead of silently missing rows.
 */
import { EXPORT_MAX_ROWS, type ExportRow, type ViewTransactionQuery } from '@dw/contracts';
import type pg from 'pg';
import { join, query, raw, sql, type Sql } from '@dw/db';
import { filterConditions } from './transaction-queries';
import { acknowledged, endedAt, iso, transactionJson } from './transaction-sql';

/**
 * The largest export row the API admits, as NDJSON: a 500-character description, 20 metadata keys
 * of 40 and values of 500 characters, a 128-character orderId and a 256-character destination, every
 * character 4 bytes of UTF-8 (an emoji), is 46,736 bytes of text; quotes and the fixed fields add under 1 KB.
 */
export const EXPORT_ROW_MAX_BYTES = 48 * 1024;

/**
 * The export pool's sessions never sort what an index already orders. Every page of a download is
 * a keyset read in an index's order; with statistics that lag the table (a bulk load, a database
 * whose autovacuum has not run yet), PostgreSQL judged the merchant's rows few and, for the page's
 * joins, read every remaining row by bitmap and sorted them all to keep 21: 39 ms a page at 100,000
 * rows (0.13 ms by the index), so a download of 100,000 ran at 49 rows a second (found by an
 * outside audit; export-stale-statistics.test.ts). A sort is still made where no index gives the order.
 */
export const EXPORT_SESSION_SETTINGS = { enable_sort: 'off' };

/** Rows per page for a page budget of `pageBytes`: at least one. */
export const exportPageRows = (pageBytes: number) => Math.max(1, Math.floor(pageBytes / EXPORT_ROW_MAX_BYTES));

export class ExportTooLargeError extends Error {
  constructor(maxRows: number) {
    super(`more than ${maxRows} rows matched while the export streamed`);
  }
}

export interface ExportCount {
  /** Matching rows created before asOf, counted only up to one past the limit (so the count stays bounded). */
  count: number;
  /** The database's clock when counted: the export's upper bound on created_at (with the query's own `to`). */
  asOf: string;
}

/** The statement of the export's count: matching rows created before now, up to one past the limit. */
export function exportCountStatement(merchantId: string, q: ViewTransactionQuery): Sql {
  const where = filterConditions(merchantId, q);
  return sql`
    WITH clock AS (SELECT date_trunc('milliseconds', now()) AS as_of)
    SELECT (SELECT count(*)::int FROM (
              SELECT 1 FROM transactions t
               WHERE ${join(where, ' AND ')} AND t.created_at < (SELECT as_of FROM clock)
               LIMIT ${EXPORT_MAX_ROWS + 1}) x) AS n,
           ${raw(iso('(SELECT as_of FROM clock)'))} AS "asOf"`;
}

export async function countUpToLimit(db: pg.Pool, merchantId: string, q: ViewTransactionQuery): Promise<ExportCount> {
  const [row] = await query<{ n: number; asOf: string }>(db, exportCountStatement(merchantId, q));
  return { count: row?.n ?? 0, asOf: row!.asOf };
}

/** Where one page of the export stands: below asOf, and below the last row sent (none on the first page). */
export interface ExportPosition {
  asOf: string;
  after?: { createdAt: string; id: string };
}

/** The statement of one page of `rows` export rows. */
export function exportPageStatement(merchantId: string, q: ViewTransactionQuery, at: ExportPosition, rows: number): Sql {
  const where = filterConditions(merchantId, q);
  where.push(sql`t.created_at < ${at.asOf}::timestamptz`);
  if (at.after) where.push(sql`(t.created_at, t.id) < (${at.after.createdAt}::timestamptz, ${at.after.id}::uuid)`);
  return sql`
    SELECT ${transactionJson('t')} AS transaction,
           e.id AS "lastEventId", e.type AS "lastEventType",
           CASE WHEN e.id IS NULL THEN NULL ELSE COALESCE(d.status::text, 'pending') END AS "deliveryStatus",
           COALESCE(a.attempts, 0)::int AS "deliveryAttempts",
           ${raw(iso('a.acked_at'))} AS "acknowledgedAt"
      FROM transactions t
      LEFT JOIN transaction_events e ON e.transaction_id = t.id AND e.sequence = t.last_sequence
      LEFT JOIN callback_deliveries d ON d.event_id = e.id
      LEFT JOIN LATERAL (
        SELECT count(*) AS attempts, min(${raw(endedAt('x'))}) FILTER (WHERE ${raw(acknowledged('x'))}) AS acked_at
          FROM callback_attempts x WHERE x.event_id = e.id) a ON true
     WHERE ${join(where, ' AND ')}
     ORDER BY t.created_at DESC, t.id DESC
     LIMIT ${rows}`;
}

export interface ExportOptions {
  /** From countUpToLimit: only rows created before it. */
  asOf: string;
  /** The page budget (EXPORT_PAGE_BYTES). */
  pageBytes: number;
  /** EXPORT_MAX_ROWS unless a test needs a smaller cap. */
  maxRows?: number;
}

/** The rows, page by page; throws ExportTooLargeError when more than maxRows (EXPORT_MAX_ROWS) turn up. */
export async function* exportRows(db: pg.Pool, merchantId: string, q: ViewTransactionQuery, opts: ExportOptions): AsyncGenerator<ExportRow> {
  const pageRows = exportPageRows(opts.pageBytes);
  const at: ExportPosition = { asOf: opts.asOf };
  const maxRows = opts.maxRows ?? EXPORT_MAX_ROWS;
  let sent = 0;
  for (;;) {
    const rows = await query<ExportRow>(db, exportPageStatement(merchantId, q, at, pageRows));
    for (const row of rows) {
      if (sent === maxRows) throw new ExportTooLargeError(maxRows);
      sent++;
      yield row;
    }
    const last = rows[rows.length - 1];
    if (rows.length < pageRows || !last) return;
    at.after = { createdAt: last.transaction.createdAt, id: last.transaction.id };
  }
}
