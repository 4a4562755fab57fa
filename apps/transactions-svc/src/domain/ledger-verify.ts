/**
 * `npm run ledger:verify` (docs/operations.md): recomputes every balance from the ledger's entries
 * and checks what the ledger promises (docs/money.md): each balance equals the sum of its entries;
 * each entry's balance-after equals the running sum of its chain, in time order; each currency's
 * postings sum to zero; every transaction has exactly the entries its status calls for (by
 * ledger_move, the one definition), for its amount, merchant and currency. It reads the whole
 * ledger: an operator's command, never a request's work. Up to 20 examples of each difference.
 */
import type pg from 'pg';
import { query, raw, sql } from '@dw/db';
import { CREDIT_LIMIT_IN_FORCE } from './ledger-sql';

const EXAMPLES = 20;
const change = (account: string) => raw(`ledger_change(e.debit_account, e.credit_account, e.amount, '${account}')`);
/** A balance's three figures, as text, from the row `alias`, with one more figure that says where they stand. */
const figures = (alias: string, name: 'entries' | 'seq', column: string) =>
  raw(`json_build_object('available', ${alias}.available::text, 'held', ${alias}.held::text, 'incoming', ${alias}.incoming::text, '${name}', ${column}::text)`);
/** The stored balance row `b`, as both checks report it. */
const stored = figures('b', 'entries', 'b.entry_count');

export interface VerifyReport {
  ok: boolean;
  balances: number;
  entries: number;
  transactions: number;
  /** balances below -creditLimit: allowed only where history left them so (docs/money.md) */
  overdrawn: number;
  differences: { balances: object[]; chain: object[]; postings: object[]; transactions: object[] };
}

export async function verifyLedger(db: pg.Pool): Promise<VerifyReport> {
  const balances = await query<object>(db, sql`
    SELECT coalesce(b.merchant_id, s.merchant_id) AS "merchantId", coalesce(b.currency, s.currency) AS currency,
           ${stored} AS stored,
           ${figures('s', 'entries', 's.entries')} AS "fromEntries"
      FROM balances b
      FULL JOIN (SELECT e.merchant_id, e.currency, sum(${change('available')}) AS available, sum(${change('held')}) AS held,
                        sum(${change('incoming')}) AS incoming, count(*) AS entries, max(e.balance_seq) AS last_seq
                   FROM ledger_entries e GROUP BY 1, 2) s ON s.merchant_id = b.merchant_id AND s.currency = b.currency
     WHERE (s.merchant_id IS NULL AND b.entry_count > 0)
        OR (s.merchant_id IS NOT NULL AND (b.merchant_id IS NULL OR b.available <> s.available OR b.held <> s.held
            OR b.incoming <> s.incoming OR b.entry_count <> s.entries OR s.last_seq <> s.entries))
     LIMIT ${EXAMPLES}`);
  const chain = await query<object>(db, sql`
    SELECT "merchantId", currency, seq, problem FROM (
      SELECT e.merchant_id AS "merchantId", e.currency, e.balance_seq::text AS seq,
             CASE WHEN e.available <> sum(${change('available')}) OVER w OR e.held <> sum(${change('held')}) OVER w
                       OR e.incoming <> sum(${change('incoming')}) OVER w THEN 'balance after the entry is not the running sum'
                  WHEN e.created_at < lag(e.created_at) OVER w THEN 'dated before the entry before it' END AS problem
        FROM ledger_entries e
      WINDOW w AS (PARTITION BY e.merchant_id, e.currency ORDER BY e.balance_seq ROWS UNBOUNDED PRECEDING)) x
     WHERE problem IS NOT NULL LIMIT ${EXAMPLES}`);
  const postings = await query<object>(db, sql`
    SELECT currency, sum(amount)::text AS sum FROM ledger_postings GROUP BY currency HAVING sum(amount) <> 0 LIMIT ${EXAMPLES}`);
  const transactions = await query<object>(db, sql`
    WITH expected AS (
      SELECT DISTINCT t.id, t.merchant_id, t.currency, t.amount, mv.kind
        FROM transactions t
        CROSS JOIN LATERAL (VALUES ('pending'::transaction_status), (t.status)) AS s(status)
        CROSS JOIN LATERAL ledger_move(t.type, s.status) mv
    )
    SELECT coalesce(x.id, e.transaction_id) AS "transactionId", coalesce(x.kind, e.kind) AS kind,
           CASE WHEN e.transaction_id IS NULL THEN 'missing' WHEN x.id IS NULL THEN 'not called for by its status'
                ELSE 'amount, merchant or currency differs' END AS problem
      FROM expected x
      FULL JOIN (SELECT * FROM ledger_entries WHERE transaction_id IS NOT NULL) e ON e.transaction_id = x.id AND e.kind = x.kind
     WHERE x.id IS NULL OR e.transaction_id IS NULL
        OR e.amount <> x.amount OR e.merchant_id <> x.merchant_id OR e.currency <> x.currency
     LIMIT ${EXAMPLES}`);
  const [counts] = await query<{ balances: number; entries: number; transactions: number; overdrawn: number }>(db, sql`
    SELECT (SELECT count(*) FROM balances WHERE entry_count > 0)::int AS balances,
           (SELECT count(*) FROM ledger_entries)::int AS entries,
           (SELECT count(*) FROM transactions)::int AS transactions,
           (SELECT count(*) FROM balances b JOIN merchants m ON m.id = b.merchant_id
             WHERE b.available < -${CREDIT_LIMIT_IN_FORCE})::int AS overdrawn`);
  const differences = { balances, chain, postings, transactions };
  const ok = Object.values(differences).every((list) => list.length === 0);
  return { ok, ...counts!, differences };
}

export interface BalanceCheck {
  /** How many balances differ from their newest entry. */
  differing: number;
  /** Up to 20 of them, named, with both sides: what the operator starts from. */
  examples: { merchantId: string; currency: string; stored: object; newestEntry: object | null }[];
}

/**
 * The service's own periodic check (the ledger_balance_check_* metrics): each balance against its
 * newest entry's balance-after (the running sum of its entries, which ledger:verify recounts), one
 * index look-up per balance, so its cost follows the number of balances, not the ledger's length.
 */
export async function balancesDifferingFromLastEntry(db: pg.Pool): Promise<BalanceCheck> {
  const rows = await query<BalanceCheck['examples'][number] & { differing: number }>(db, sql`
    SELECT count(*) OVER ()::int AS differing, b.merchant_id AS "merchantId", b.currency,
           ${stored} AS stored,
           CASE WHEN e.merchant_id IS NOT NULL
                THEN ${figures('e', 'seq', 'e.balance_seq')} END AS "newestEntry"
      FROM balances b
      LEFT JOIN ledger_entries e ON e.merchant_id = b.merchant_id AND e.currency = b.currency AND e.balance_seq = b.entry_count
     WHERE b.entry_count > 0
       AND (e.merchant_id IS NULL OR e.available <> b.available OR e.held <> b.held OR e.incoming <> b.incoming)
     ORDER BY b.merchant_id, b.currency
     LIMIT ${EXAMPLES}`);
  return { differing: rows[0]?.differing ?? 0, examples: rows.map(({ differing: _, ...example }) => example) };
}
