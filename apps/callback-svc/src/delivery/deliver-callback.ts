/**
 * One message from the delivery queue, as a few typed steps (svix's worker shape):
 * parse → admit (the merchant's share) → claim (event, URL and secret as they are now) → send →
 * record → retry or settle. A send cut short by shutdown after its request went out is a failed
 * attempt, settled within a bound; one cut short before releases its claim and hands the message
 * back (settle-aborted.ts).
 *
 * Returning acks the message; throwing hands it back to the queue (AmqpConnection). So the handler
 * returns only once the outcome is in the database and, on a failure with attempts left, the
 * broker has confirmed the retry: a crash or an outage on the way repeats a step, never loses a
 * callback. Messages that can never be delivered (unparsable, unknown event) are logged and acked.
 * The claim and the record are written for many messages at once (group commit), shared by both
 * lanes (libs/messaging's topology): a message is handed over to the waits of the lane it came from.
 */
import { HandBackError, MERCHANT_HEADER, type AmqpConnection, type LaneNames, type MessageHandler, type MessagingLogger } from '@dw/messaging';
import { contextFromHeaders, failSpan, SpanKind, withSpan, type Span } from '@dw/telemetry';
import type { ConsumeMessage } from 'amqplib';
import type { Pool } from 'pg';
import type { AttemptResult } from './attempt-result';
import { claimDeliveries, type Claim, type ClaimRequest, type DeliveryTarget } from './claim-delivery';
import { parseDeliveryMessage, type DeliveryMessage } from './delivery-message';
import {
  callbackAttemptDuration,
  callbackAttempts,
  callbackDeliveries,
  callbackDeliveryLatency,
  callbacksInFlight,
  callbacksThrottled,
  duplicateDeliveryMessages,
  invalidDeliveryMessages,
} from './delivery-metrics';
import { groupCommit } from '@dw/batching';
import type { MerchantShares, Slot } from './merchant-shares';
import { markSeen, recordOutcomes, type Outcome, type RecordedStatus } from './record-attempt';
import { scheduleRetry, throttle, type RetryPlan } from './schedule-retry';
import { SendAbortedError, type CallbackSender } from './send-callback';
import { handBackAborted, settleAborted, type AbortedSendBounds } from './settle-aborted';

export interface DeliveryDeps {
  pool: Pool;
  amqp: AmqpConnection;
  sender: CallbackSender;
  plan: RetryPlan;
  shares: MerchantShares;
  /** How long a claim on an attempt holds: the callback timeout plus a margin. */
  claimLeaseMs: number;
  /** How long a send cut short by shutdown may take to be recorded and retried, or handed back. */
  abortedSend: AbortedSendBounds;
  logger: MessagingLogger;
}

interface Steps {
  claim(request: ClaimRequest): Promise<Claim>;
  record(outcome: Outcome): Promise<void>;
  /** Marks a delivery as seen (its message is alive, in a throttle queue), so the sweeper leaves it be. */
  seen(eventId: string): Promise<void>;
}

/** The handler of one lane's queue: `createDeliveryHandler(deps)(names.lane('manual'))`. */
export type LaneHandler = (lane: LaneNames) => MessageHandler;

export function createDeliveryHandler(deps: DeliveryDeps): LaneHandler {
  // Group commit: one statement per batch, one batch of each kind at a time (libs/batching), for
  // both lanes together.
  const steps: Steps = {
    claim: groupCommit((requests: ClaimRequest[]) => claimDeliveries(deps.pool, requests, deps.claimLeaseMs)),
    record: groupCommit((outcomes: Outcome[]) => recordOutcomes(deps.pool, outcomes)),
    seen: groupCommit((eventIds: string[]) => markSeen(deps.pool, eventIds)),
  };
  return (lane) => async (message) => {
    const parsed = parseDeliveryMessage(message);
    if (!parsed.ok) {
      invalidDeliveryMessages.inc({ reason: 'unparsable' });
      deps.logger.error({ reason: parsed.reason, messageId: message.properties.messageId }, 'dropping an undeliverable callback message');
      return;
    }
    const msg = parsed.message;
    const merchant = String(message.properties.headers?.[MERCHANT_HEADER] ?? 'unknown');
    const admission = await deps.shares.admit(merchant);
    if (admission.kind === 'closed') throw new HandBackError('shutting down');
    if (admission.kind === 'throttle') return held(deps, steps, lane, message, msg, 'over_share');
    callbacksInFlight.inc();
    let attempt: AttemptSummary | undefined;
    try {
      // A consumer span in the event's trace (the relay's publish is its parent): an SRE finds a
      // merchant's deliveries by merchant.id, and a delivery that gave up is marked as an error.
      attempt = await withSpan(
        'callback deliver',
        {
          kind: SpanKind.CONSUMER,
          parent: contextFromHeaders(message.properties.headers),
          attributes: {
            'messaging.system': 'rabbitmq',
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': lane.queue,
            'messaging.rabbitmq.message.delivery_tag': message.fields.deliveryTag,
            'callback.lane': lane.lane,
            'messaging.message.id': msg.eventId,
            'merchant.id': merchant,
            'callback.event_id': msg.eventId,
            'callback.attempt': msg.attempt,
          },
        },
        (span) => deliver(deps, steps, lane, message, msg, admission.slot, span),
      );
    } finally {
      callbacksInFlight.dec();
      admission.slot.release(attempt);
    }
  };
}

/** What an attempt tells the merchant's share (how slow its endpoint is, whether it fails). */
type AttemptSummary = { durationMs: number; succeeded: boolean };

/** Returns the attempt's summary when one was made. */
async function deliver(
  deps: DeliveryDeps,
  steps: Steps,
  lane: LaneNames,
  message: ConsumeMessage,
  msg: DeliveryMessage,
  slot: Slot,
  span: Span,
): Promise<AttemptSummary | undefined> {
  const { logger } = deps;
  const claim = await steps.claim({ eventId: msg.eventId, attempt: msg.attempt });
  switch (claim.kind) {
    case 'unknown_event':
      invalidDeliveryMessages.inc({ reason: 'unknown_event' });
      logger.error({ eventId: msg.eventId }, 'dropping a callback message for an event that does not exist');
      return undefined;
    case 'settled':
      duplicateDeliveryMessages.inc();
      logger.info({ eventId: msg.eventId, status: claim.status, attempt: msg.attempt }, 'delivery already settled; dropping the duplicate');
      return undefined;
    case 'busy':
      // Another copy is sending this attempt now, or its claimant died: look again after a wait.
      await held(deps, steps, lane, message, msg, 'claimed_elsewhere');
      return undefined;
    case 'done':
      duplicateDeliveryMessages.inc();
      await resumeAfterDone(deps, lane, message, msg, claim);
      return undefined;
    case 'claimed':
      break;
  }
  const target = claim.target;
  if (target.url === null) {
    await steps.record({ eventId: msg.eventId, attempt: msg.attempt, status: 'skipped', trigger: target.trigger });
    span.setAttribute('callback.delivery_status', 'skipped');
    callbackDeliveries.inc({ status: 'skipped' });
    logger.info({ merchantId: target.merchantId, eventId: msg.eventId, eventType: target.eventType }, 'no callback URL for this event type; delivery skipped');
    return undefined;
  }
  slot.sending();
  let result: AttemptResult;
  try {
    result = await deps.sender.send({ url: target.url, eventId: msg.eventId, body: msg.body, signingSecrets: target.signingSecrets });
  } catch (err) {
    if (err instanceof SendAbortedError) await handBackAborted(deps, msg, 'info', 'its request was not written yet, so no attempt is recorded');
    throw err;
  }
  callbackAttempts.inc({ outcome: result.outcome });
  callbackAttemptDuration.observe({ outcome: result.outcome }, result.durationMs / 1000);
  const status =
    result.outcome === 'aborted'
      ? await settleAborted(deps, msg, (deadline) => settle(deps, steps, lane, message, msg, target, result, deadline))
      : await settle(deps, steps, lane, message, msg, target, result);
  span.setAttribute('callback.delivery_status', status);
  if (status === 'failed') failSpan(span, `no attempts left: delivery failed (${result.error ?? `HTTP ${result.statusCode}`})`);
  return { durationMs: result.durationMs, succeeded: result.outcome === 'succeeded' };
}

/**
 * Records the attempt, then schedules the next one or settles the delivery for good; returns the
 * delivery's status. Once `deadline` (an aborted send's bound) has passed, the retry is not published.
 */
async function settle(
  deps: DeliveryDeps,
  steps: Steps,
  lane: LaneNames,
  message: ConsumeMessage,
  msg: DeliveryMessage,
  target: DeliveryTarget,
  result: AttemptResult,
  deadline?: AbortSignal,
): Promise<RecordedStatus> {
  // The schedule counts within the current series: a redelivery gets all six attempts again.
  const delayMs = result.outcome === 'succeeded' ? undefined : deps.plan.delayAfter(msg.attempt - target.seriesStart);
  const status: RecordedStatus = result.outcome === 'succeeded' ? 'succeeded' : delayMs === undefined ? 'failed' : 'retrying';
  // Recorded before the retry is published: were it the other way round, a database failure after a
  // confirmed publish would requeue this message beside its retry and fork the schedule in two.
  await steps.record({ eventId: msg.eventId, attempt: msg.attempt, status, result, trigger: target.trigger });
  deadline?.throwIfAborted();
  if (delayMs !== undefined) await scheduleRetry(deps.amqp, lane, message, msg.eventId, msg.attempt + 1, delayMs);
  callbackDeliveries.inc({ status });
  if (status === 'succeeded') callbackDeliveryLatency.observe((Date.now() - target.eventCreatedAt.getTime()) / 1000);
  const log = {
    merchantId: target.merchantId,
    eventId: msg.eventId,
    attempt: msg.attempt,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
  };
  if (status === 'succeeded') deps.logger.debug?.(log, 'callback delivered');
  else if (status === 'retrying') deps.logger.warn({ ...log, retryInMs: delayMs }, 'callback attempt failed; retry scheduled');
  // A warning, not an error: the merchant's endpoint failed, not this service (an SRE reads level >= 50
  // for this service's own faults, docs/operations.md); callback_deliveries_total{status="failed"} counts them.
  else deps.logger.warn(log, 'callback attempt failed; no attempts left, delivery failed');
  return status;
}

/**
 * A copy of an attempt already recorded: nothing is sent again. When that attempt is the latest and
 * failed with attempts left, its retry may have been lost (the process that recorded it died before
 * the broker confirmed the retry), so the retry is published again; a duplicate of it collapses at
 * its own claim.
 */
async function resumeAfterDone(deps: DeliveryDeps, lane: LaneNames, message: ConsumeMessage, msg: DeliveryMessage, claim: Extract<Claim, { kind: 'done' }>) {
  const delayMs = deps.plan.delayAfter(msg.attempt - claim.seriesStart);
  const retryMayBeLost = claim.status === 'retrying' && claim.attemptCount === msg.attempt && delayMs !== undefined;
  deps.logger.info({ eventId: msg.eventId, attempt: msg.attempt, republishRetry: retryMayBeLost }, 'attempt already made; not sending it again');
  if (retryMayBeLost) await scheduleRetry(deps.amqp, lane, message, msg.eventId, msg.attempt + 1, delayMs);
}

async function held(
  deps: DeliveryDeps,
  steps: Steps,
  lane: LaneNames,
  message: ConsumeMessage,
  msg: DeliveryMessage,
  reason: 'over_share' | 'claimed_elsewhere',
): Promise<void> {
  await throttle(deps.amqp, lane, message, msg.eventId, msg.attempt);
  await steps.seen(msg.eventId);
  callbacksThrottled.inc({ reason });
}
