import { Type, type Static } from '@sinclair/typebox';
import {
  Amount,
  Currency,
  Description,
  Destination,
  Metadata,
  OrderId,
  Timestamp,
  TransactionStatus,
  TransactionType,
  Uuid,
} from './primitives';
import { PRINTABLE_OR_EMPTY_PATTERN } from './text-rules';

const createFields = {
  amount: Amount,
  currency: Currency,
  orderId: OrderId,
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
};

export const CreateDepositBody = Type.Object(createFields, { additionalProperties: false, $id: 'CreateDepositBody' });
export const CreateWithdrawBody = Type.Object(
  { ...createFields, destination: Destination },
  { additionalProperties: false, $id: 'CreateWithdrawBody' },
);
export type CreateDepositBody = Static<typeof CreateDepositBody>;
export type CreateWithdrawBody = Static<typeof CreateWithdrawBody>;

export const Transaction = Type.Object(
  {
    id: Uuid,
    type: TransactionType,
    status: TransactionStatus,
    amount: Type.String({
      description: 'The decimal value it was created with, as PostgreSQL NUMERIC writes it: leading integer zeros dropped, fraction digits kept ("00.5" → "0.5", "100.50" stays "100.50")',
    }),
    currency: Type.String(),
    orderId: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    // Any key, as stored: TypeBox's default key pattern `^(.*)$` does not match a key holding a line
    // separator (U+2028, printable), and the response serializer then dropped that key.
    metadata: Type.Record(Type.String({ pattern: '^[\\s\\S]*$' }), Type.String()),
    destination: Type.Union([Type.String(), Type.Null()], { description: 'Withdraws only; null on deposits' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type Transaction = Static<typeof Transaction>;

/** Operator API of transactions-svc (not routed by the gateway). */
export const StatusChangeBody = Type.Object(
  {
    status: Type.Union([Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')]),
    reason: Type.Optional(Type.String({ maxLength: 500, pattern: PRINTABLE_OR_EMPTY_PATTERN, description: 'At most 500 printable characters' })),
  },
  { additionalProperties: false },
);
export type StatusChangeBody = Static<typeof StatusChangeBody>;

export const TransactionIdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
