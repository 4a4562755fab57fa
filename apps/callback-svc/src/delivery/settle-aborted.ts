/**
 * A send cut short by shutdown. Its request went out, so the merchant may have received it: that
 * makes it an attempt like any other (docs/callbacks.md: every attempt is recorded, six at most per
 * series), settled the way every failed attempt is, recorded and then retried on schedule (or the
 * delivery failed when it was its series' last), and the message acked. Handing it back instead sent
 * the same attempt number again later: the merchant saw one POST more than the viewer showed, and a
 * series could reach it seven times (docs/decisions.md).
 *
 * The shutdown budget is running out meanwhile, so settling gets a bound. Past it, or when it fails
 * (PostgreSQL unreachable, the broker not confirming the retry), the send falls back to what a killed
 * process leaves: the claim released, the message handed back unacked, the attempt sent again. The
 * same hand-back is the whole story for a send cut short before its request was written: nothing
 * reached the merchant, so it is no attempt.
 */
import { HandBackError, type MessagingLogger } from '@dw/messaging';
import type { Pool } from 'pg';
import type { DeliveryMessage } from './delivery-message';
import type { RecordedStatus } from './record-attempt';
import { releaseClaim } from './release-claim';

/** How long an aborted send's bookkeeping may take, out of the half of the budget left after the sends'. */
export interface AbortedSendBounds {
  /** Recording the attempt and, with attempts left, the broker's confirm of its retry. */
  settleWithinMs: number;
  /** Releasing the claim when that could not be done. */
  releaseWithinMs: number;
}

/**
 * A fifth and a tenth of SHUTDOWN_TIMEOUT_MS, at most 2 s and 1 s: 3 s of the default 10 s in the
 * worst case, leaving 2 s (a fifth) to close the connections and flush telemetry.
 */
export function abortedSendBounds(shutdownTimeoutMs: number): AbortedSendBounds {
  return {
    settleWithinMs: Math.min(2_000, Math.floor(shutdownTimeoutMs / 5)),
    releaseWithinMs: Math.min(1_000, Math.floor(shutdownTimeoutMs / 10)),
  };
}

export interface AbortedSendDeps {
  pool: Pool;
  logger: MessagingLogger;
  abortedSend: AbortedSendBounds;
}

/**
 * Runs `settle` (record, then retry or fail) within the bound; resolves with the delivery's status, or
 * hands the message back. `settle` gets the deadline's signal: past it, it must not publish the retry,
 * since the message handed back will find the attempt recorded and publish it then (resumeAfterDone).
 */
export async function settleAborted(
  deps: AbortedSendDeps,
  msg: DeliveryMessage,
  settle: (deadline: AbortSignal) => Promise<RecordedStatus>,
): Promise<RecordedStatus> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`not recorded and retried within ${deps.abortedSend.settleWithinMs} ms`)),
    deps.abortedSend.settleWithinMs,
  );
  try {
    return await untilAborted(deadline.signal, settle(deadline.signal));
  } catch (err) {
    deadline.abort(err);
    const reason = err instanceof Error ? err.message : String(err);
    return handBackAborted(deps, msg, 'warn', `the attempt could not be recorded and retried (${reason}); it will be sent again`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Releases the claim (so the redelivered copy need not wait for the lease; best effort, bounded) and
 * hands the message back to RabbitMQ at once, unacked.
 */
export async function handBackAborted(deps: AbortedSendDeps, msg: DeliveryMessage, level: 'info' | 'warn', why: string): Promise<never> {
  const released = await releaseClaim(deps.pool, msg.eventId, msg.attempt, deps.abortedSend.releaseWithinMs);
  deps.logger[level]({ eventId: msg.eventId, attempt: msg.attempt, claimReleased: released }, `callback send aborted by shutdown; message handed back: ${why}`);
  throw new HandBackError('shutting down');
}

/** `work`, or the signal's reason once it is aborted first (work that settles later is ignored). */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
