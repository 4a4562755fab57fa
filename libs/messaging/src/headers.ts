import type { Message } from 'amqplib';

/**
 * The attempt number of a callback delivery travels in this header (rascal's habit): it survives
 * dead-lettering from a retry queue back to the delivery queue, unlike anything kept in a process.
 */
export const ATTEMPT_HEADER = 'x-attempt';

/**
 * The merchant an event belongs to, set by the outbox: callback-svc applies the merchant's share of
 * delivery capacity (docs/callbacks.md) before it reads anything from the database.
 */
export const MERCHANT_HEADER = 'x-dw-merchant';

/** How many times a message has been throttled (held back for its merchant's share); not attempts. */
export const THROTTLED_HEADER = 'x-dw-throttled';

/** A non-negative integer header, 0 when missing or malformed. */
export function countHeader(message: Pick<Message, 'properties'>, name: string): number {
  const raw: unknown = message.properties.headers?.[name];
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** The attempt number a message carries; 1 when the header is missing or not a positive integer. */
export function attemptOf(message: Pick<Message, 'properties'>): number {
  return Math.max(1, countHeader(message, ATTEMPT_HEADER));
}
