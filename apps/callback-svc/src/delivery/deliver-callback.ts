/**
 * One message from the delivery queue, as a few typed steps (svix's worker shape):
 * parse → prepare (event, URL and secret as they are now) → send → record → retry or settle.
 *
 * Returning acks the message; throwing hands it back to the queue (AmqpConnection). So the handler
 * returns only once the outcome is in the database and, on a failure with attempts left, the
 * broker has confirmed the retry: a crash or an outage on the way repeats a callback, never loses
 * one. Messages that can never be delivered (unparsable, unknown event) are logged and acked.
 */
import type { MessageHandler, MessagingLogger, MessagingNames, AmqpConnection } from '@dw/messaging';
import { contextFromHeaders, withSpan } from '@dw/telemetry';
import type { ConsumeMessage } from 'amqplib';
import type { Pool } from 'pg';
import type { AttemptResult } from './attempt-result';
import { parseDeliveryMessage, type DeliveryMessage } from './delivery-message';
import {
  callbackAttemptDuration,
  callbackAttempts,
  callbackDeliveries,
  callbackDeliveryLatency,
  duplicateDeliveryMessages,
  invalidDeliveryMessages,
} from './delivery-metrics';
import { isSettled, prepareDelivery, type DeliveryTarget } from './prepare-delivery';
import { markSkipped, recordAttempt, type RecordedStatus } from './record-attempt';
import { scheduleRetry, type RetryPlan } from './schedule-retry';
import type { CallbackSender } from './send-callback';

export interface DeliveryDeps {
  pool: Pool;
  amqp: AmqpConnection;
  names: MessagingNames;
  sender: CallbackSender;
  plan: RetryPlan;
  logger: MessagingLogger;
}

export function createDeliveryHandler(deps: DeliveryDeps): MessageHandler {
  return async (message) => {
    const parsed = parseDeliveryMessage(message);
    if (!parsed.ok) {
      invalidDeliveryMessages.inc({ reason: 'unparsable' });
      deps.logger.error({ reason: parsed.reason, messageId: message.properties.messageId }, 'dropping an undeliverable callback message');
      return;
    }
    const { eventId, attempt } = parsed.message;
    await withSpan(
      'callback deliver',
      { parent: contextFromHeaders(message.properties.headers), attributes: { 'callback.event_id': eventId, 'callback.attempt': attempt } },
      () => deliver(deps, message, parsed.message),
    );
  };
}

async function deliver(deps: DeliveryDeps, message: ConsumeMessage, msg: DeliveryMessage): Promise<void> {
  const { pool, logger } = deps;
  const target = await prepareDelivery(pool, msg.eventId);
  if (!target) {
    invalidDeliveryMessages.inc({ reason: 'unknown_event' });
    logger.error({ eventId: msg.eventId }, 'dropping a callback message for an event that does not exist');
    return;
  }
  if (isSettled(target.status)) {
    duplicateDeliveryMessages.inc();
    logger.info({ eventId: msg.eventId, status: target.status, attempt: msg.attempt }, 'delivery already settled; dropping the duplicate');
    return;
  }
  if (target.url === null) {
    await markSkipped(pool, msg.eventId);
    callbackDeliveries.inc({ status: 'skipped' });
    logger.info({ eventId: msg.eventId, eventType: target.eventType }, 'no callback URL for this event type; delivery skipped');
    return;
  }
  const result = await deps.sender.send({ url: target.url, eventId: msg.eventId, body: msg.body, signingSecrets: target.signingSecrets });
  observeAttempt(result);
  await settle(deps, message, msg, target, result);
}

/** Records the attempt, then schedules the next one or settles the delivery for good. */
async function settle(deps: DeliveryDeps, message: ConsumeMessage, msg: DeliveryMessage, target: DeliveryTarget, result: AttemptResult) {
  const delayMs = result.outcome === 'succeeded' ? undefined : deps.plan.delayAfter(msg.attempt);
  const status: RecordedStatus = result.outcome === 'succeeded' ? 'succeeded' : delayMs === undefined ? 'failed' : 'retrying';
  // Recorded before the retry is published: were it the other way round, a database failure after a
  // confirmed publish would requeue this message beside its retry and fork the schedule in two.
  await recordAttempt(deps.pool, msg.eventId, msg.attempt, result, status);
  if (delayMs !== undefined) await scheduleRetry(deps.amqp, deps.names, message, msg.eventId, msg.attempt + 1, delayMs);
  callbackDeliveries.inc({ status });
  if (status === 'succeeded') callbackDeliveryLatency.observe((Date.now() - target.eventCreatedAt.getTime()) / 1000);
  const log = { eventId: msg.eventId, attempt: msg.attempt, statusCode: result.statusCode, error: result.error, durationMs: result.durationMs };
  if (status === 'succeeded') deps.logger.info(log, 'callback delivered');
  else if (status === 'retrying') deps.logger.warn({ ...log, retryInMs: delayMs }, 'callback attempt failed; retry scheduled');
  else deps.logger.error(log, 'callback attempt failed; no attempts left, delivery failed');
}

function observeAttempt(result: AttemptResult): void {
  callbackAttempts.inc({ outcome: result.outcome });
  callbackAttemptDuration.observe({ outcome: result.outcome }, result.durationMs / 1000);
}
