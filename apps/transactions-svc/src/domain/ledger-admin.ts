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
import { ensureBalanceRow } from './ledger-sql';
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
 * currency without a limit of its own follows. Lowering a limit moves no money: a balance already
 * below the new limit refuses new withdraws until it is not.
 */
export async function setCreditLimit(pool: pg.Pool, merchantId: string, limit: string, currency: string | null) {
  return retryDeadlock(() => inTransaction(pool, async (db) => {
    await requireMerchant(db, merchantId);
    if (currency) {
      await ensureBalanceRow(db, merchantId, currency);
      await query(db, sql`
        UPDATE balances SET credit_limit = ${limit}::numeric, credit_limit_set = true
         WHERE merchant_id = ${merchantId}::uuid AND currency = ${currency}`);
    } else {
      await query(db, sql`UPDATE merchants SET credit_limit = ${limit}::numeric, updated_at = now() WHERE id = ${merchantId}::uuid`);
      await query(db, sql`
        UPDATE balances SET credit_limit = ${limit}::numeric
         WHERE merchant_id = ${merchantId}::uuid AND NOT credit_limit_set`);
    }
    return { merchantId, currency, creditLimit: limit };
  }));
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
 * (history from before the ledger, a lowered limit) can be brought back in steps.
 */
export async function adjustBalance(pool: pg.Pool, a: Adjustment): Promise<{ entry: BalanceEntry; replayed: boolean }> {
  return retryDeadlock(() => inTransaction(pool, async (db) => {
    await requireMerchant(db, a.merchantId);
    await ensureBalanceRow(db, a.merchantId, a.currency);
    const [balance] = await query<{ fits: boolean; spendable: string }>(db, sql`
      SELECT ${a.amount}::numeric > 0 OR available + ${a.amount}::numeric >= -credit_limit AS fits,
             greatest(available + credit_limit, 0)::text AS spendable
        FROM balances WHERE merchant_id = ${a.merchantId}::uuid AND currency = ${a.currency} FOR UPDATE`);
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
