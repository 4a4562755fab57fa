/** The ledger's Prometheus metrics (docs/operations.md): entries written, refusals, the balance check. */
import type { LedgerEntryKind, TransactionStatusName, TransactionTypeName } from '@dw/contracts';
import { metricsRegistry } from '@dw/telemetry';
import { Counter, Gauge } from 'prom-client';

export const ledgerEntries = new Counter({
  name: 'ledger_entries_total',
  help: 'Ledger entries written by this process, by kind (deposit.pending … withdraw.release); adjustments, written by the merchant:adjust-balance command, are not counted here.',
  labelNames: ['kind'],
  registers: [metricsRegistry],
});

export const withdrawsRefused = new Counter({
  name: 'withdraws_refused_total',
  help: 'Withdraws refused with nothing written, by reason (insufficient_funds: past available + credit limit).',
  labelNames: ['reason'],
  registers: [metricsRegistry],
});

export const balanceCheckDifferences = new Gauge({
  name: 'ledger_balance_check_differences',
  help: 'Balances that differ from their newest ledger entry, as of the last periodic check (0 is healthy).',
  registers: [metricsRegistry],
});

export const balanceCheckTimestamp = new Gauge({
  name: 'ledger_balance_check_timestamp_seconds',
  help: 'Unix time of the last completed balance check.',
  registers: [metricsRegistry],
});

/** The entry a transaction's new status wrote (as the SQL function ledger_move says); none for processing. */
export function entryKindOf(type: TransactionTypeName, status: TransactionStatusName): LedgerEntryKind | undefined {
  if (status === 'processing') return undefined;
  if (type === 'deposit') return `deposit.${status}`;
  return ({ pending: 'withdraw.hold', completed: 'withdraw.completed', failed: 'withdraw.release' } as const)[status];
}

export function countEntries(transactions: { type: TransactionTypeName; status: TransactionStatusName }[]): void {
  for (const t of transactions) {
    const kind = entryKindOf(t.type, t.status);
    if (kind) ledgerEntries.inc({ kind });
  }
}
