import type { CallbackEvent, Transaction } from './index';

/**
 * The exact bytes POSTed to a merchant for an event, keys in the contract's order. The event is
 * stored as jsonb (which reorders keys), so every publisher serializes through this one function;
 * the body is then fixed for every attempt and signed as sent.
 */
export function callbackBody(event: CallbackEvent): string {
  const t: Transaction = event.data;
  const data: Transaction = {
    id: t.id,
    type: t.type,
    status: t.status,
    amount: t.amount,
    currency: t.currency,
    orderId: t.orderId,
    description: t.description,
    metadata: t.metadata,
    destination: t.destination,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, sequence: event.sequence, data });
}
