/**
 * The ledger's part of every statement that changes a transaction (docs/money.md): the entry each
 * new status writes, the balance it moves and the balance right after it, in the same statement as
 * the status change and its event, so one is never committed without the other.
 *
 * Which entry a status writes is said once, by the SQL function ledger_move (its migration); the
 * entry moves `amount` out of its debit account into its credit account, so its two postings sum
 * to zero by construction.
 */
import { query, raw, sql, type Sql } from '@dw/db';
import type pg from 'pg';

/** The signed change of one account by the entries of `alias` (ledger_change: +into, -out of). */
const change = (alias: string, account: string) => raw(`ledger_change(${alias}.debit, ${alias}.credit, ${alias}.amount, '${account}')`);

/**
 * CTEs to append after a CTE named `shaped` that holds the changed transactions (their columns,
 * new status included): `moves` (one per row whose status moves money), `totals` and `balanced`
 * (one upsert per merchant and currency: a statement may move one balance several times, and an
 * upsert may touch a row only once), then `entered`, the entries, each with its place in its
 * balance's chain and the balance right after it. Balances are upserted in key order, the order in
 * which the create statement locks them too, so two statements never wait on each other in a
 * circle. An entry is dated as the status change that writes it (now(): the transaction's time, as
 * its createdAt or updatedAt), except that it is never dated before the newest one of its balance
 * (last_entry_at), so the statement's order by time is the chain's order; only a transaction that
 * took the balance's lock after a later-started one takes that one's time instead.
 */
export function ledgerCtes(reason: string | null): Sql {
  return sql`
    moves AS (
      SELECT s.merchant_id, s.currency, s.id AS transaction_id, s.amount, mv.kind, mv.debit, mv.credit,
             row_number() OVER (PARTITION BY s.merchant_id, s.currency ORDER BY s.id) AS n
      FROM shaped s CROSS JOIN LATERAL ledger_move(s.type, s.status) mv
    ),
    stepped AS (
      SELECT mo.*,
             ${change('mo', 'available')} AS d_available, ${change('mo', 'held')} AS d_held, ${change('mo', 'incoming')} AS d_incoming
      FROM moves mo
    ),
    totals AS (
      SELECT merchant_id, currency, sum(d_available) AS d_available, sum(d_held) AS d_held, sum(d_incoming) AS d_incoming,
             count(*) AS entries
      FROM stepped GROUP BY merchant_id, currency
    ),
    balanced AS (
      INSERT INTO balances AS b (merchant_id, currency, available, held, incoming, credit_limit, entry_count, last_entry_at)
      SELECT t.merchant_id, t.currency, t.d_available, t.d_held, t.d_incoming, m.credit_limit, t.entries, now()
      FROM totals t JOIN merchants m ON m.id = t.merchant_id
      ORDER BY t.merchant_id, t.currency
      ON CONFLICT (merchant_id, currency) DO UPDATE
        SET available = b.available + excluded.available, held = b.held + excluded.held,
            incoming = b.incoming + excluded.incoming, entry_count = b.entry_count + excluded.entry_count,
            last_entry_at = greatest(b.last_entry_at, now())
      RETURNING b.merchant_id, b.currency, b.available, b.held, b.incoming, b.entry_count, b.last_entry_at
    ),
    entered AS (
      INSERT INTO ledger_entries (merchant_id, currency, balance_seq, id, kind, debit_account, credit_account, amount,
                                  available, held, incoming, transaction_id, reason, created_at)
      SELECT st.merchant_id, st.currency, b.entry_count - (t.entries - st.n), uuid_v7(), st.kind, st.debit, st.credit, st.amount,
             b.available - coalesce(sum(st.d_available) OVER later, 0),
             b.held - coalesce(sum(st.d_held) OVER later, 0),
             b.incoming - coalesce(sum(st.d_incoming) OVER later, 0),
             st.transaction_id, ${reason}::text, b.last_entry_at
      FROM stepped st
      JOIN totals t ON t.merchant_id = st.merchant_id AND t.currency = st.currency
      JOIN balanced b ON b.merchant_id = st.merchant_id AND b.currency = st.currency
      WINDOW later AS (PARTITION BY st.merchant_id, st.currency ORDER BY st.n ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
    )`;
}

/**
 * The credit limit in force for a balance row `b` of the merchant `m` (both aliases in the query):
 * its own when an operator set one; otherwise the merchant's default, or the row's copy of the
 * default when that is lower. The copy is written when the row is made and whenever the default
 * changes, but a row made by a create whose statement read the default just before an operator
 * changed it keeps the older value (the command cannot see a row not yet committed; found by an
 * outside audit). Taking the lower of the two makes a lowered default hold at once for such a row,
 * and the command writes the copies again once the statements that might hold an older value are
 * done (settleDefaultCopies, ledger-admin.ts), so a raised one follows.
 */
export const CREDIT_LIMIT_IN_FORCE = raw('CASE WHEN b.credit_limit_set THEN b.credit_limit ELSE least(b.credit_limit, m.credit_limit) END');

/**
 * Makes the merchant's balance row in `currency` (zeros, the merchant's default credit limit) when
 * there is none, so that a withdraw or an operator has a row to lock.
 */
export async function ensureBalanceRow(db: pg.Pool | pg.PoolClient, merchantId: string, currency: string): Promise<void> {
  await query(db, sql`
    INSERT INTO balances (merchant_id, currency, credit_limit)
    SELECT id, ${currency}, credit_limit FROM merchants WHERE id = ${merchantId}::uuid
    ON CONFLICT DO NOTHING`);
}
