/**
 * Step 3: the outcome, written before the message is acked, one statement for a whole batch of
 * outcomes (group commit). Per outcome it writes the attempt row and the delivery's status
 * together, and lets go of the claim. Two guards keep a late duplicate from rewinding a delivery:
 * `succeeded` is never replaced, and attempt_count only grows. A skipped delivery (no URL) writes
 * its status and no attempt.
 *
 * The merchant has already received the attempt when it is recorded, so a lost connection to
 * PostgreSQL is retried for a while (RECORD_RETRY_WITHIN_MS) rather than handing the message back at
 * once: handed back, the attempt would be sent again and the first POST never shown. The statement
 * is safe to repeat (the guards above, and an attempt row is written once).
 */
import { CONNECTION_LOSS_DELAYS_MS, isConnectionLoss, retryOn } from '@dw/db';
import type { Pool } from 'pg';
import type { AttemptResult } from './attempt-result';
import { NOT_SETTLED_SQL, type DeliveryTrigger } from './claim-delivery';

export type RecordedStatus = 'succeeded' | 'retrying' | 'failed' | 'skipped';

export interface Outcome {
  eventId: string;
  attempt: number;
  status: RecordedStatus;
  /** The HTTP attempt; absent when skipped. */
  result?: AttemptResult;
  /** The trigger of the series this attempt belongs to (docs/api.md#redelivery-and-recovery: manual attempts are marked). */
  trigger: DeliveryTrigger;
}

const RECORD = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[])
      AS r(event_id, attempt, status, at, url, status_code, error, duration_ms, trigger)
  ),
  delivery AS (
    UPDATE callback_deliveries d SET
      status = CASE WHEN d.status = 'succeeded' THEN d.status ELSE r.status::delivery_status END,
      attempt_count = CASE WHEN r.status = 'skipped' THEN d.attempt_count ELSE GREATEST(d.attempt_count, r.attempt) END,
      claimed_until = NULL,
      updated_at = now()
    FROM r WHERE d.event_id = r.event_id
    RETURNING d.event_id
  )
  INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, error, duration_ms, trigger)
  SELECT r.event_id, r.attempt, r.at, r.url, r.status_code, r.error, r.duration_ms, r.trigger::delivery_trigger FROM r
   WHERE r.status <> 'skipped'
  ON CONFLICT (event_id, attempt) DO NOTHING`;

/**
 * Open deliveries only, looked up by key: see CLAIM_SQL on why "not settled" rather than the open
 * statuses, and why these statements are not named (prepared).
 */
export const MARK_SEEN_SQL = `UPDATE callback_deliveries d SET updated_at = now() WHERE d.event_id = ANY($1::text[]) AND ${NOT_SETTLED_SQL('d')}`;

/** A message of these deliveries is alive (handed to a throttle queue): the sweeper must not copy it. */
export async function markSeen(db: Pick<Pool, 'query'>, eventIds: string[]): Promise<void[]> {
  await db.query({
    text: MARK_SEEN_SQL,
    values: [eventIds],
  });
  return eventIds.map(() => undefined);
}

/** How long recording a batch of outcomes is tried again while PostgreSQL is out of reach. */
export const RECORD_RETRY_WITHIN_MS = 5_000;

export async function recordOutcomes(pool: Pool, outcomes: Outcome[]): Promise<void[]> {
  const column = <T>(pick: (o: Outcome) => T) => outcomes.map(pick);
  const values = [
    column((o) => o.eventId),
    column((o) => o.attempt),
    column((o) => o.status),
    column((o) => o.result?.at ?? null),
    column((o) => o.result?.url ?? null),
    column((o) => o.result?.statusCode ?? null),
    column((o) => o.result?.error ?? null),
    column((o) => o.result?.durationMs ?? null),
    column((o) => o.trigger),
  ];
  await retryOn(() => pool.query({ text: RECORD, values }), { when: isConnectionLoss, withinMs: RECORD_RETRY_WITHIN_MS, delaysMs: CONNECTION_LOSS_DELAYS_MS });
  return outcomes.map(() => undefined);
}
