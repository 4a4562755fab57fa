import { Type, type TSchema } from '@sinclair/typebox';
import { PRINTABLE_OR_EMPTY_PATTERN, PRINTABLE_PATTERN, UUID_PATTERN } from './text-rules';

const PRINTABLE = PRINTABLE_PATTERN;

/** Positive decimal: at most 18 integer and 8 fraction digits, no sign, no exponent, at least one non-zero digit. */
export const AMOUNT_PATTERN = '^(?=[0-9.]*[1-9])[0-9]{1,18}(\\.[0-9]{1,8})?$';

export const Amount = Type.String({
  pattern: AMOUNT_PATTERN,
  description: 'A decimal string > 0, up to 18 integer and 8 fraction digits, e.g. "100.50"; never a JSON number',
  examples: ['100.50'],
});

export const Currency = Type.String({
  pattern: '^[A-Z0-9]{3,10}$',
  description: '3–10 characters A–Z and 0–9',
  examples: ['USD', 'USDT'],
});

export const OrderId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: PRINTABLE,
  // The description is also the validation message ("must be …"), so it says what is accepted first.
  description: "1–128 printable characters: the merchant's own reference, unique per merchant and transaction type",
  examples: ['order-42'],
});

export const Description = Type.String({
  maxLength: 500,
  pattern: PRINTABLE_OR_EMPTY_PATTERN,
  description: 'At most 500 printable characters',
});

export const Metadata = Type.Record(
  // Every key must reach the value schema: TypeBox's default key pattern `^(.*)$` does not match a
  // key holding a line separator (U+2028 is printable), whose value then went unchecked.
  Type.String({ pattern: '^[\\s\\S]*$' }),
  Type.String({ maxLength: 500, pattern: PRINTABLE_OR_EMPTY_PATTERN, description: 'At most 500 printable characters' }),
  {
    maxProperties: 20,
    propertyNames: { minLength: 1, maxLength: 40, pattern: PRINTABLE, description: '1–40 printable characters' },
    description: 'Up to 20 keys of 1–40 printable characters, string values of at most 500 printable characters',
  },
);

export const Destination = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: PRINTABLE,
  description: '1–256 printable characters: the account or wallet that receives the funds',
});

export const Uuid = Type.String({ format: 'uuid', pattern: UUID_PATTERN, description: 'A UUID (8-4-4-4-12 hex digits)' });
/** RFC 3339; validators apply CONTRACT_FORMATS['date-time'] (real dates, years 0001–9999). */
export const Timestamp = Type.String({ format: 'date-time' });

/** Pages of lists (transactions, the balance history): default and most items per page. */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/** The opaque keyset cursor of a list's next page (transactions, the balance history). */
export const PageCursor = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'The nextCursor of the previous page, unchanged' });

/** One page of a keyset-paged list: its items, newest first, and the cursor of the next page (null: none). */
export const KeysetPage = <T extends TSchema>(item: T, $id: string) =>
  Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false, $id });

export const TRANSACTION_TYPES = ['deposit', 'withdraw'] as const;
export const TRANSACTION_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'retrying', 'failed', 'skipped'] as const;

export const TransactionType = Type.Union(TRANSACTION_TYPES.map((t) => Type.Literal(t)));
export const TransactionStatus = Type.Union(TRANSACTION_STATUSES.map((s) => Type.Literal(s)));
export const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));

export type TransactionTypeName = (typeof TRANSACTION_TYPES)[number];
export type TransactionStatusName = (typeof TRANSACTION_STATUSES)[number];
export type DeliveryStatusName = (typeof DELIVERY_STATUSES)[number];
