/**
 * Step 4, and the throttle: the message is handed to a TTL queue that dead-letters it back to the
 * queue of its lane (a manual series stays in the manual lane), so RabbitMQ holds the wait, not a
 * timer in this process. The caller acks the
 * current message only once this resolves (the broker confirmed the copy), so a crash in between
 * repeats the step instead of losing it.
 *
 * - a retry (after a failed attempt with attempts left) goes to the retry queue of its wait, with
 *   the next attempt number;
 * - a throttled message (its merchant has used its share of delivery capacity) goes to a throttle
 *   queue with the same attempt number: waiting there is not an attempt.
 */
import {
  ATTEMPT_HEADER,
  countHeader,
  MERCHANT_HEADER,
  publishConfirmed,
  THROTTLE_DELAYS_MS,
  THROTTLED_HEADER,
  type AmqpConnection,
  type LaneNames,
} from '@dw/messaging';
import type { ConsumeMessage } from 'amqplib';

/** Trace context and the merchant travel on to every attempt; x-death and the broker's headers do not. */
const CARRIED_HEADERS = ['traceparent', 'tracestate', 'baggage', MERCHANT_HEADER];

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

type Message = Pick<ConsumeMessage, 'content' | 'properties'>;

/** The waits of the lane a message came from. */
type Waits = Pick<LaneNames, 'retryQueue' | 'throttleQueue'>;

export function scheduleRetry(amqp: AmqpConnection, lane: Waits, message: Message, eventId: string, nextAttempt: number, delayMs: number): Promise<void> {
  return handOver(amqp, lane.retryQueue(delayMs), message, eventId, { [ATTEMPT_HEADER]: nextAttempt });
}

/** The throttle wait this message gets: longer each time it comes back still over its share. */
function throttleDelay(message: Pick<ConsumeMessage, 'properties'>): number {
  const times = countHeader(message, THROTTLED_HEADER);
  return THROTTLE_DELAYS_MS[Math.min(times, THROTTLE_DELAYS_MS.length - 1)]!;
}

export function throttle(amqp: AmqpConnection, lane: Waits, message: Message, eventId: string, attempt: number): Promise<void> {
  return handOver(amqp, lane.throttleQueue(throttleDelay(message)), message, eventId, {
    [ATTEMPT_HEADER]: attempt,
    [THROTTLED_HEADER]: countHeader(message, THROTTLED_HEADER) + 1,
  });
}

async function handOver(amqp: AmqpConnection, queue: string, message: Message, eventId: string, own: Record<string, unknown>): Promise<void> {
  // While disconnected, the message being handled is already back in its queue: fail now rather
  // than wait for a reconnect and then publish a copy of a message that will run again anyway.
  // A connection being closed gracefully still carries it (the shutdown waits for this handler).
  if (!amqp.canPublish()) throw new Error('not connected to RabbitMQ: cannot hand the message over');
  const channel = await amqp.confirmChannel();
  const headers: Record<string, unknown> = { ...own };
  for (const name of CARRIED_HEADERS) {
    const value: unknown = message.properties.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  await publishConfirmed(channel, '', queue, message.content, {
    headers,
    messageId: eventId,
    contentType: 'application/json',
    mandatory: true,
  });
}
