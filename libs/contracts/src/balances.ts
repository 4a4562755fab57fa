/**
 * Balances and the ledger as merchants see them (docs/api.md, "Balances and the ledger"): one
 * balance per currency in three parts plus the credit limit, and the statement of ledger entries.
 * Every amount is a decimal string (PostgreSQL NUMERIC end to end), signed where it is a change.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Currency, KeysetPage, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, PageCursor, Timestamp, Uuid } from './primitives';

/** A signed decimal string: "-12.5", "0", "100.50". */
export const SignedDecimal = Type.String({
  pattern: '^-?[0-9]+(\\.[0-9]+)?$',
  description: 'Signed decimal string, never a JSON number, e.g. "-12.50"',
  examples: ['100.50', '-20', '0'],
});

export const Balance = Type.Object(
  {
    currency: Currency,
    available: Type.String({ description: 'May be spent: withdraws are paid from it (may be negative down to -creditLimit)' }),
    held: Type.String({ description: 'Reserved by withdraws not yet completed or failed' }),
    incoming: Type.String({ description: 'Deposits not yet completed or failed: shown, not spendable' }),
    creditLimit: Type.String({ description: 'How far below zero available may go (operator-set, default "0")' }),
  },
  { additionalProperties: false },
);
export type Balance = Static<typeof Balance>;

export const BalanceList = Type.Object(
  { balances: Type.Array(Balance, { description: 'One per currency the merchant has ever had an entry in, by currency code' }) },
  { additionalProperties: false, $id: 'BalanceList' },
);
export type BalanceList = Static<typeof BalanceList>;

export const LEDGER_ENTRY_KINDS = [
  'deposit.pending',
  'deposit.completed',
  'deposit.failed',
  'withdraw.hold',
  'withdraw.completed',
  'withdraw.release',
  'adjustment',
] as const;
export type LedgerEntryKind = (typeof LEDGER_ENTRY_KINDS)[number];
export const LedgerEntryKindSchema = Type.Union(LEDGER_ENTRY_KINDS.map((k) => Type.Literal(k)));

export const BalanceChange = Type.Object(
  { available: SignedDecimal, held: SignedDecimal, incoming: SignedDecimal },
  { additionalProperties: false, description: 'The signed change of each part ("0" where it did not move)' },
);

export const BalanceEntry = Type.Object(
  {
    id: Type.String({ description: 'The ledger entry id ("le_…")' }),
    createdAt: Timestamp,
    currency: Currency,
    kind: LedgerEntryKindSchema,
    change: BalanceChange,
    available: SignedDecimal,
    held: SignedDecimal,
    incoming: SignedDecimal,
    transactionId: Type.Union([Uuid, Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, description: 'One ledger entry and the balance right after it' },
);
export type BalanceEntry = Static<typeof BalanceEntry>;

export const BalanceHistoryQuery = Type.Object(
  {
    currency: Type.Optional(Currency),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt >= from' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt < to' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
    cursor: Type.Optional(PageCursor),
  },
  { additionalProperties: false },
);
export type BalanceHistoryQuery = Static<typeof BalanceHistoryQuery>;

export const BalanceHistoryPage = KeysetPage(BalanceEntry, 'BalanceHistoryPage');
export type BalanceHistoryPage = Static<typeof BalanceHistoryPage>;
