import { Type, type Static } from '@sinclair/typebox';
import { BalanceEntry } from './balances';
import { DeliveryStatus, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, KeysetPage, OrderId, PageCursor, Timestamp, TransactionStatus, TransactionType, Uuid } from './primitives';
import { Transaction } from './transactions';


export const ViewTransactionQuery = Type.Object(
  {
    id: Type.Optional(Uuid),
    type: Type.Optional(TransactionType),
    status: Type.Optional(TransactionStatus),
    orderId: Type.Optional(OrderId),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt >= from' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt < to' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
    cursor: Type.Optional(PageCursor),
  },
  { additionalProperties: false },
);
export type ViewTransactionQuery = Static<typeof ViewTransactionQuery>;

export const TransactionPage = KeysetPage(Transaction, 'TransactionPage');
export type TransactionPage = Static<typeof TransactionPage>;

export const DeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: Timestamp,
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer({ minimum: 0 }),
    url: Type.Union([Type.String(), Type.Null()], {
      description: 'the callback URL this attempt was sent to, as it was set at that moment (a URL changed between attempts shows here)',
    }),
    trigger: Type.Union([Type.Literal('automatic'), Type.Literal('manual')], {
      description: '"manual" for the attempts of a series the merchant started (redelivery, recovery)',
    }),
  },
  { additionalProperties: false },
);

export const TransactionEventView = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    createdAt: Timestamp,
    delivery: Type.Object(
      { status: DeliveryStatus, attempts: Type.Array(DeliveryAttempt) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const TransactionDetail = Type.Object(
  {
    transaction: Transaction,
    events: Type.Array(TransactionEventView),
    ledgerEntries: Type.Array(BalanceEntry, { description: "The ledger entries the transaction wrote, in order (docs/money.md)" }),
    traceId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false, $id: 'TransactionDetail' },
);
export type TransactionDetail = Static<typeof TransactionDetail>;

export { Uuid as TransactionId, OrderId as OrderIdSchema };

/** The CSV export (Accept: text/csv) streams at most this many rows; more matching is a 400. */
export const EXPORT_MAX_ROWS = 100_000;

/** One row of the export as transactions-svc streams it to the ui (NDJSON), before CSV. */
export interface ExportRow {
  transaction: Transaction;
  lastEventId: string | null;
  lastEventType: string | null;
  deliveryStatus: string | null;
  deliveryAttempts: number;
  /** When a 200 first acknowledged the latest event; null when never. */
  acknowledgedAt: string | null;
}
