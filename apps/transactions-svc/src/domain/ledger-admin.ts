/**
 * The operator's money commands (docs/money.md, "Operators"): credit limits and adjustments. An
 * adjustment is one ledger entry between the merchant's available and the platform's adjustments
 * account, with who made it, why and the operator's reference, which makes it idempotent. Both
 * lock the balance row first, as every withdraw does, so neither can slip between a withdraw's
 * funds check and its hold.
 */
import type { BalanceEntry } from '@dw/contracts';
import type pg from 'pg';
import { inTransaction, query, sql } from '@dw/db';
import { ledgerEntries } from '../ledger/ledger-metrics';
import { entryJson } from './balance-queries';
import { CREDIT_LIMIT_IN_FORCE, ensureBalanceRow } from './ledger-sql';
import { retryDeadlock } from './retry-deadlock';

export class LedgerCommandError extends Error {}

/**
 * No lock on the merchant's row: a create takes a key-share lock on it (the balance's foreign key)
 * while it holds balance rows, so an operator holding the merchant's row while waiting for a
 * balance would wait on it in a circle (the property test found this).
 */
async function requireMerchant(db: pg.PoolClient, merchantId: string): Promise<void> {
  const rows = await query(db, sql`SELECT 1 FROM merchants WHERE id = ${merchantId}::uuid`);
  if (!rows.length) throw new LedgerCommandError(`no merchant with id ${merchantId}`);
}

/**
 * Sets the credit limit of one currency, or (currency null) the merchant's default, which every
 * currency without a limit of its own follows. A limit is refused when a balance it governs is
 * already below -limit (available >= -creditLimit holds for every balance, docs/money.md); the
 * lowest limit that is not refused is named. The balances it governs are locked first, as every
 * withdraw locks its balance, so no withdraw slips between the check and the change.
 */
export async function setCreditLimit(pool: pg.Pool, merchantId: string, limit: string, currency: string | null) {
  const result = await retryDeadlock(() => inTransaction(pool, async (db) => {
    await requireMerchant(db, merchantId);
    if (currency) await ensureBalanceRow(db, merchantId, currency);
    const governed = sql`merchant_id = ${merchantId}::uuid AND ${currency ? sql`currency = ${currency}` : sql`NOT credit_limit_set`}`;
    const lockGoverned = () => query(db, sql`SELECT 1 FROM balances WHERE ${governed} ORDER BY currency FOR UPDATE`);
    // Every governed row, locked before the merchant's row is touched: a create making a currency's
    // first row locks the merchant's row (the currency cap), and may then want one of these.
    await lockGoverned();
    if (!currency) {
      await query(db, sql`UPDATE merchants SET credit_limit = ${limit}::numeric, updated_at = now() WHERE id = ${merchantId}::uuid`);
      // A currency's first row made meanwhile, not yet committed when the rows above were locked,
      // follows the default too; and its maker may have used the old one (an adjustment or a
      // withdraw that read it). From here none can be made until this commits (the currency cap's
      // trigger waits for the merchant's row), so locking again takes every row the default governs,
      // and the check below sees what each uses.
      await lockGoverned();
    }
    // The balance that uses the most names the lowest limit allowed (ordered by the number: by its
    // text, "-300" came before "-700", and the limit named was refused in turn; an outside audit).
    const [lowest] = await query<{ currency: string; shown: string; needed: string }>(db, sql`
      SELECT b.currency, b.available::text AS shown, (-b.available)::text AS needed
        FROM balances b WHERE ${governed} AND b.available < -${limit}::numeric
       ORDER BY b.available, b.currency LIMIT 1`);
    if (lowest) {
      const floor = /^0*(\.0*)?$/.test(limit) ? '0' : `-${limit}`;
      throw new LedgerCommandError(
        `refused: ${lowest.currency} available is ${lowest.shown}, below ${floor}; the lowest ${currency ? 'limit' : 'default'} it allows now is ${lowest.needed}`,
      );
    }
    if (currency) {
      await query(db, sql`
        UPDATE balances SET credit_limit = ${limit}::numeric, credit_limit_set = true
         WHERE merchant_id = ${merchantId}::uuid AND currency = ${currency}`);
    } else {
      await query(db, sql`UPDATE balances SET credit_limit = ${limit}::numeric WHERE merchant_id = ${merchantId}::uuid AND NOT credit_limit_set`);
    }
    const [tx] = await query<{ xid: string }>(db, sql`SELECT (pg_current_xact_id()::text::numeric % 4294967296)::text AS xid`);
    return { out: { merchantId, currency, creditLimit: limit }, xid: tx!.xid };
  }));
  if (!currency) await settleDefaultCopies(pool, merchantId, result.xid);
  return result.out;
}

/** How long settleDefaultCopies waits for older statements at most; a later command settles what it left. */
const SETTLE_WAIT_MS = 5_000;

/**
 * Writes the new default again into the copies of rows made by statements that read the old one
 * (CREDIT_LIMIT_IN_FORCE, ledger-sql.ts), once no statement is running whose snapshot was taken
 * before the change committed (PostgreSQL's backend_xmin, what CREATE INDEX CONCURRENTLY waits for).
 */
async function settleDefaultCopies(pool: pg.Pool, merchantId: string, changedBy: string): Promise<void> {
  const deadline = Date.now() + SETTLE_WAIT_MS;
  for (;;) {
    const [row] = await query<{ older: boolean }>(pool, sql`
      SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                      WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_xmin IS NOT NULL
                        AND age(backend_xmin) >= age(${changedBy}::xid)) AS older`);
    if (!row?.older || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await query(pool, sql`
    UPDATE balances b SET credit_limit = m.credit_limit FROM merchants m
     WHERE m.id = ${merchantId}::uuid AND b.merchant_id = m.id AND NOT b.credit_limit_set AND b.credit_limit <> m.credit_limit`);
}

export interface Adjustment {
  merchantId: string;
  currency: string;
  /** signed decimal, not zero */
  amount: string;
  reason: string;
  reference: string;
  actor: string;
}

/**
 * Writes the adjustment's entry, or, when its reference was used before, answers that entry again
 * (replayed) if it is the same adjustment, and refuses it otherwise. A debit is refused when it
 * would take available below -creditLimit; a credit never is, so a balance that is already below
 * (history from before the ledger) can be brought back in steps.
 */
export async function adjustBalance(pool: pg.Pool, a: Adjustment): Promise<{ entry: BalanceEntry; replayed: boolean }> {
  return retryDeadlock(() => inTransaction(pool, async (db) => {
    await requireMerchant(db, a.merchantId);
    await ensureBalanceRow(db, a.merchantId, a.currency);
    const [balance] = await query<{ fits: boolean; spendable: string }>(db, sql`
      SELECT ${a.amount}::numeric > 0 OR b.available + ${a.amount}::numeric >= -${CREDIT_LIMIT_IN_FORCE} AS fits,
             greatest(b.available + ${CREDIT_LIMIT_IN_FORCE}, 0)::text AS spendable
        FROM balances b JOIN merchants m ON m.id = b.merchant_id
       WHERE b.merchant_id = ${a.merchantId}::uuid AND b.currency = ${a.currency} FOR UPDATE OF b`);
    const [earlier] = await query<{ entry: BalanceEntry; same: boolean }>(db, sql`
      SELECT ${entryJson} AS entry,
             (e.currency = ${a.currency} AND ledger_change(e.debit_account, e.credit_account, e.amount, 'available') = ${a.amount}::numeric
              AND e.reason = ${a.reason}) AS same
        FROM ledger_entries e WHERE e.merchant_id = ${a.merchantId}::uuid AND e.reference = ${a.reference}`);
    if (earlier) {
      if (!earlier.same) throw new LedgerCommandError(`reference ${a.reference} was used by another entry (${earlier.entry.id}) with other values`);
      return { entry: earlier.entry, replayed: true };
    }
    if (!balance!.fits) {
      throw new LedgerCommandError(
        `refused: ${a.amount} ${a.currency} would take available below the credit limit (at most ${balance!.spendable} can be taken)`,
      );
    }
    const credit = !a.amount.startsWith('-');
    const magnitude = credit ? a.amount : a.amount.slice(1);
    const [written] = await query<{ entry: BalanceEntry }>(db, sql`
      WITH moved AS (
        UPDATE balances
           SET available = available + ${a.amount}::numeric, entry_count = entry_count + 1,
               last_entry_at = greatest(last_entry_at, clock_timestamp())
         WHERE merchant_id = ${a.merchantId}::uuid AND currency = ${a.currency}
        RETURNING *
      )
      INSERT INTO ledger_entries AS e (merchant_id, currency, balance_seq, id, kind, debit_account, credit_account, amount,
                                       available, held, incoming, reason, reference, actor, created_at)
      SELECT merchant_id, currency, entry_count, uuid_v7(), 'adjustment',
             ${credit ? 'platform:adjustments' : 'available'}::ledger_account, ${credit ? 'available' : 'platform:adjustments'}::ledger_account,
             ${magnitude}::numeric, available, held, incoming, ${a.reason}, ${a.reference}, ${a.actor}, last_entry_at
        FROM moved
      RETURNING ${entryJson} AS entry`);
    ledgerEntries.inc({ kind: 'adjustment' });
    return { entry: written!.entry, replayed: false };
  }));
}
