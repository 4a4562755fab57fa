// The tables' enums and row types, generated from prisma/schema.prisma by `prisma generate` (the
// `generate` target; git-ignored). Exported as types only: no Prisma code loads at runtime.
//
// The enums are the database's: a status column's value is one of these, declared once, in the
// schema. The model types are what a PrismaClient reads (Prisma's camelCase field names, Decimal for
// NUMERIC); hand-written SQL selects snake_case columns and amounts as ::text, so it declares the
// shape of its own rows and uses the enums for their status columns.
export type { DeliveryStatus, DeliveryTrigger, TransactionStatus, TransactionType } from './generated/prisma/enums.js';
export type {
  CallbackAttempt,
  CallbackDelivery,
  ManualOutboxMessage,
  Merchant,
  OutboxMessage,
  Transaction,
  TransactionEvent,
} from './generated/prisma/client.js';
