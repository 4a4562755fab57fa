/**
 * What callback-svc needs from a message on the delivery queue: the event id, the exact body bytes
 * (sent unchanged on every attempt) and the attempt number. A message that yields none of these
 * can never be delivered, so it is reported as invalid and acked rather than retried forever.
 */
import { attemptOf } from '@dw/messaging';
import type { ConsumeMessage } from 'amqplib';

export interface DeliveryMessage {
  eventId: string;
  body: Buffer;
  attempt: number;
}

export type ParsedMessage = { ok: true; message: DeliveryMessage } | { ok: false; reason: string };

export function parseDeliveryMessage(message: Pick<ConsumeMessage, 'content' | 'properties'>): ParsedMessage {
  let bodyId: unknown;
  try {
    bodyId = (JSON.parse(message.content.toString('utf8')) as { id?: unknown } | null)?.id;
  } catch {
    return { ok: false, reason: 'the body is not JSON' };
  }
  const messageId: unknown = message.properties.messageId;
  if (typeof bodyId !== 'string' || bodyId === '') return { ok: false, reason: 'the body has no event id' };
  if (messageId !== undefined && messageId !== bodyId) {
    return { ok: false, reason: `messageId ${String(messageId)} differs from the body's id ${bodyId}` };
  }
  return { ok: true, message: { eventId: bodyId, body: message.content, attempt: attemptOf(message) } };
}
