/**
 * The merchant's reads of its money (docs/api.md, "Balances and the ledger"): its balances, read
 * from their rows (never summed from history), and its statement, keyset-paged on the ledger's
 * indexes newest first: by (created_at, currency, balance_seq) over every currency, or by
 * (created_at, balance_seq) within one. An entry is never dated before the newest of its balance,
 * so within one currency this order is the chain's order.
 */
import { LIST_LIMIT_DEFAULT, type BalanceEntry, type BalanceHistoryPage, type BalanceHistoryQuery, type BalanceList } from '@dw/contracts';
import type pg from 'pg';
import { join, query, raw, sql, type Sql } from '@dw/db';
import { BadCursorError, isCursorTime } from './cursor';
import { CREDIT_LIMIT_IN_FORCE } from './ledger-sql';
import { iso } from './transaction-sql';

const change = (account: string) => `ledger_change(e.debit_account, e.credit_account, e.amount, '${account}')::text`;

/** The public entry (BalanceEntry) of a row of ledger_entries aliased `e`. */
export const entryJson = raw(`json_build_object(
    'id', 'le_' || replace(e.id::text, '-', ''), 'createdAt', ${iso('e.created_at')}, 'currency', e.currency, 'kind', e.kind,
    'change', json_build_object('available', ${change('available')}, 'held', ${change('held')}, 'incoming', ${change('incoming')}),
    'available', e.available::text, 'held', e.held::text, 'incoming', e.incoming::text,
    'transactionId', e.transaction_id, 'reason', e.reason, 'reference', e.reference)`);

export async function balancesOf(db: pg.Pool, merchantId: string): Promise<BalanceList> {
  const rows = await query<BalanceList['balances'][number]>(db, sql`
    SELECT b.currency, b.available::text AS available, b.held::text AS held, b.incoming::text AS incoming,
           (${CREDIT_LIMIT_IN_FORCE})::text AS "creditLimit"
      FROM balances b JOIN merchants m ON m.id = b.merchant_id
     WHERE b.merchant_id = ${merchantId}::uuid AND b.entry_count > 0
     ORDER BY b.currency`);
  return { balances: rows };
}

/** A transaction's entries, in the order they were written (the detail view). */
export function entriesOfTransaction(transactionId: string): Sql {
  return sql`
    SELECT COALESCE(json_agg(${entryJson} ORDER BY e.created_at, e.balance_seq), '[]'::json)
      FROM ledger_entries e WHERE e.transaction_id = ${transactionId}::uuid`;
}

interface HistoryPosition {
  createdAt: string;
  currency: string;
  seq: string;
}

const encode = (p: HistoryPosition) => Buffer.from(JSON.stringify([p.createdAt, p.currency, p.seq])).toString('base64url');

/** The position a statement cursor names; BadCursorError when this API did not issue it. */
export function decodeHistoryCursor(cursor: string): HistoryPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3) {
      const [createdAt, currency, seq] = value as unknown[];
      if (
        isCursorTime(createdAt) &&
        typeof currency === 'string' && /^[A-Z0-9]{3,10}$/.test(currency) &&
        typeof seq === 'string' && /^[1-9][0-9]{0,17}$/.test(seq)
      ) {
        return { createdAt, currency, seq };
      }
    }
  } catch {
    // not ours
  }
  throw new BadCursorError();
}

function historyWhere(merchantId: string, q: BalanceHistoryQuery, after?: HistoryPosition): Sql[] {
  const where = [sql`e.merchant_id = ${merchantId}::uuid`];
  if (q.currency) where.push(sql`e.currency = ${q.currency}`);
  if (q.from) where.push(sql`e.created_at >= ${q.from}::timestamptz`);
  if (q.to) where.push(sql`e.created_at < ${q.to}::timestamptz`);
  if (after) {
    where.push(
      q.currency
        ? sql`(e.created_at, e.balance_seq) < (${after.createdAt}::timestamptz, ${after.seq}::bigint)`
        : sql`(e.created_at, e.currency, e.balance_seq) < (${after.createdAt}::timestamptz, ${after.currency}, ${after.seq}::bigint)`,
    );
  }
  return where;
}

type EntryRow = { entry: BalanceEntry; seq: string };

/** One page of entries newest first, `limit` of them, and the position after the last. */
export async function historyPage(db: pg.Pool, merchantId: string, q: BalanceHistoryQuery, limit: number, after?: HistoryPosition): Promise<{ rows: EntryRow[]; more: boolean }> {
  const order = q.currency ? raw('e.created_at DESC, e.balance_seq DESC') : raw('e.created_at DESC, e.currency DESC, e.balance_seq DESC');
  const rows = await query<EntryRow>(db, sql`
    SELECT ${entryJson} AS entry, e.balance_seq::text AS seq
      FROM ledger_entries e
     WHERE ${join(historyWhere(merchantId, q, after), ' AND ')}
     ORDER BY ${order}
     LIMIT ${limit + 1}`);
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

const positionOf = (row: EntryRow): HistoryPosition => ({ createdAt: row.entry.createdAt, currency: row.entry.currency, seq: row.seq });

export async function balanceHistory(db: pg.Pool, merchantId: string, q: BalanceHistoryQuery): Promise<BalanceHistoryPage> {
  const limit = q.limit ?? LIST_LIMIT_DEFAULT;
  const { rows, more } = await historyPage(db, merchantId, q, limit, q.cursor ? decodeHistoryCursor(q.cursor) : undefined);
  const last = rows[rows.length - 1];
  return { items: rows.map((r) => r.entry), nextCursor: more && last ? encode(positionOf(last)) : null };
}

/**
 * Every entry matching the filters, newest first, in pages: the CSV statement. A download is never
 * paged, so `limit` and `cursor` do not apply (as for the transactions export).
 */
export async function* historyEntries(db: pg.Pool, merchantId: string, q: BalanceHistoryQuery, max: number, pageRows = 500): AsyncGenerator<BalanceEntry> {
  let after: HistoryPosition | undefined;
  let sent = 0;
  while (sent < max) {
    const { rows, more } = await historyPage(db, merchantId, q, Math.min(pageRows, max - sent), after);
    for (const row of rows) yield row.entry;
    sent += rows.length;
    const last = rows[rows.length - 1];
    if (!more || !last) return;
    after = positionOf(last);
  }
}

/** How many entries match the filters (the cursor does not apply), counted only up to one past `max` (bounded). */
export async function countHistoryUpTo(db: pg.Pool, merchantId: string, q: BalanceHistoryQuery, max: number): Promise<number> {
  const [row] = await query<{ n: number }>(db, sql`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM ledger_entries e WHERE ${join(historyWhere(merchantId, q), ' AND ')} LIMIT ${max + 1}) x`);
  return row?.n ?? 0;
}
