/**
 * Step 3: the outcome, written before the message is acked. One statement writes the attempt row
 * and the delivery's status together, so neither exists without the other.
 *
 * The delivery row is upserted (it is normally created with the event) and two guards keep a
 * duplicate message, which at-least-once delivery allows, from rewinding it: `succeeded` is never
 * replaced, and attempt_count only grows.
 */
import type { Pool } from 'pg';
import type { AttemptResult } from './attempt-result';

export type RecordedStatus = 'succeeded' | 'retrying' | 'failed';

export async function recordAttempt(pool: Pool, eventId: string, attempt: number, result: AttemptResult, status: RecordedStatus): Promise<void> {
  await pool.query(
    `WITH delivery AS (
       INSERT INTO callback_deliveries AS d (event_id, status, attempt_count, updated_at)
       VALUES ($1, $2::delivery_status, $3, now())
       ON CONFLICT (event_id) DO UPDATE SET
         status = CASE WHEN d.status = 'succeeded' THEN d.status ELSE EXCLUDED.status END,
         attempt_count = GREATEST(d.attempt_count, EXCLUDED.attempt_count),
         updated_at = now()
       RETURNING event_id
     )
     INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, error, duration_ms)
     SELECT event_id, $3, $4, $5, $6, $7, $8 FROM delivery`,
    [eventId, status, attempt, result.at, result.url, result.statusCode, result.error, result.durationMs],
  );
}

/** No URL for the event's type: nothing is sent, and the delivery says so (CONTRACT 5). */
export async function markSkipped(pool: Pool, eventId: string): Promise<void> {
  await pool.query(
    `INSERT INTO callback_deliveries AS d (event_id, status, updated_at) VALUES ($1, 'skipped', now())
     ON CONFLICT (event_id) DO UPDATE SET status = 'skipped', updated_at = now() WHERE d.status <> 'succeeded'`,
    [eventId],
  );
}
