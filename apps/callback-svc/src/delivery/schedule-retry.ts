/**
 * Step 4 on a failure with attempts left: the next attempt is a message parked in the retry queue
 * of its wait; the queue's TTL dead-letters it back to the delivery queue, so RabbitMQ holds the
 * wait, not a timer in this process. The caller acks the current message only once this resolves
 * (the broker confirmed the retry), so a crash in between repeats the attempt instead of losing it.
 */
import { ATTEMPT_HEADER, publishConfirmed, type AmqpConnection, type MessagingNames } from '@dw/messaging';
import type { ConsumeMessage } from 'amqplib';

/** Trace context travels on to every attempt; x-death and the rest of the broker's headers do not. */
const CARRIED_HEADERS = ['traceparent', 'tracestate', 'baggage'];

export interface RetryPlan {
  /** Attempts in all: the first plus one per configured wait. */
  maxAttempts: number;
  /** The wait before attempt n + 1, or undefined when attempt n was the last. */
  delayAfter(attempt: number): number | undefined;
}

export function retryPlan(retryDelaysMs: readonly number[]): RetryPlan {
  return {
    maxAttempts: 1 + retryDelaysMs.length,
    delayAfter: (attempt) => (attempt >= 1 ? retryDelaysMs[attempt - 1] : undefined),
  };
}

export async function scheduleRetry(
  amqp: AmqpConnection,
  names: MessagingNames,
  message: Pick<ConsumeMessage, 'content' | 'properties'>,
  eventId: string,
  nextAttempt: number,
  delayMs: number,
): Promise<void> {
  // While disconnected, the message being handled is already back in its queue: fail now rather
  // than wait for a reconnect and then publish a retry of an attempt that will run again anyway.
  if (!amqp.isConnected()) throw new Error('not connected to RabbitMQ: cannot schedule the retry');
  const channel = await amqp.confirmChannel();
  const headers: Record<string, unknown> = { [ATTEMPT_HEADER]: nextAttempt };
  for (const name of CARRIED_HEADERS) {
    const value: unknown = message.properties.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  await publishConfirmed(channel, '', names.retryQueue(delayMs), message.content, {
    headers,
    messageId: eventId,
    contentType: 'application/json',
    mandatory: true,
  });
}
