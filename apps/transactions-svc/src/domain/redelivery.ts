/**
 * Redelivery and bulk recovery (docs/api.md#redelivery-and-recovery). A settled delivery starts a new series: its row goes
 * back to `pending` with `series_start` = the attempts made so far (so the new series numbers its
 * attempts series_start+1 … series_start+6, unique per event, and callback-svc applies the full
 * schedule counted from series_start), and an outbox row carries the event's stored payload again
 * (same webhook-id and body; callback-svc signs each attempt afresh) for the manual lane: the
 * manual_outbox table, routing key `manual.<type>` (a recovery of thousands of events never stands
 * in front of anyone's new callbacks, in the relay or in RabbitMQ; libs/messaging's topology).
 * Both in one statement, so a
 * series is never started without its message nor a message sent for a series not started; a
 * delivery already pending or retrying is left alone, which makes recovery safe to repeat.
 *
 * An event takes at most `maxSeries` series started by the merchant (REDELIVERY_MAX_SERIES, 10 by
 * default; `manual_series` counts them): without a cap one event gathered attempts without end, and
 * the viewer's detail, which shows every attempt of an event, grew with them.
 */
import { MERCHANT_HEADER, ATTEMPT_HEADER, MANUAL_ROUTING_PREFIX } from '@dw/messaging';
import { RECOVERY_MAX_EVENTS, type RedeliveredEvent, type TransactionTypeName } from '@dw/contracts';
import type pg from 'pg';
import { empty, query, raw, sql, type Sql } from '@dw/db';
import { iso } from './transaction-sql';
import { ringOutboxDoorbell } from '../outbox/doorbell';
import { deliveryJson } from './transaction-queries';

/** Settled for good: only such a delivery may start a new series. */
const SETTLED = raw(`('succeeded', 'failed', 'skipped')`);
/** What bulk recovery restarts: deliveries that ended without a 200. */
const UNSUCCESSFUL = raw(`('failed', 'skipped')`);

/**
 * The CTEs after one named `candidates` (columns id, type, payload, merchant_id, created_at): restart
 * each candidate's delivery that is still in `statuses`, and queue its message in event order.
 * The status is checked again on the row the UPDATE locks, so two concurrent calls restart it once.
 */
function restartSeries(statuses: Sql, traceparent: string | null, maxSeries: number, guard: Sql = sql`TRUE`): Sql {
  return sql`
    restarted AS (
      UPDATE callback_deliveries d
         SET status = 'pending', series_start = d.attempt_count, trigger = 'manual', manual_series = d.manual_series + 1,
             claimed_attempt = NULL, claimed_until = NULL, updated_at = now()
        FROM candidates c
       WHERE d.event_id = c.id AND d.status IN ${statuses} AND d.manual_series < ${maxSeries}::int AND ${guard}
      RETURNING d.event_id, d.attempt_count, d.status, c.type, c.payload, c.merchant_id, c.created_at
    ),
    -- From restarted alone: joining it back to candidates (two CTE scans) was a nested loop, 15 s
    -- for 10,000 events.
    outboxed AS (
      INSERT INTO manual_outbox (event_id, merchant_id, routing_key, payload, headers)
      SELECT r.event_id, r.merchant_id, ${MANUAL_ROUTING_PREFIX}::text || r.type, r.payload,
             jsonb_build_object(${MERCHANT_HEADER}::text, r.merchant_id, ${ATTEMPT_HEADER}::text, r.attempt_count + 1)
               || CASE WHEN ${traceparent}::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('traceparent', ${traceparent}::text) END
        FROM restarted r
       ORDER BY r.created_at, r.event_id
      RETURNING id
    )`;
}

export type RedeliverOutcome =
  | { kind: 'redelivered'; event: RedeliveredEvent }
  | { kind: 'not_found' }
  /** A series is pending or retrying now. */
  | { kind: 'in_progress' }
  /** The event has had its REDELIVERY_MAX_SERIES series. */
  | { kind: 'series_cap' };

/** REDELIVERY_MAX_SERIES's default. */
export const DEFAULT_REDELIVERY_MAX_SERIES = 10;

export async function redeliverEvent(
  db: pg.Pool,
  merchantId: string,
  eventId: string,
  traceparent: string | null,
  maxSeries = DEFAULT_REDELIVERY_MAX_SERIES,
): Promise<RedeliverOutcome> {
  const redeliver = sql`
    WITH candidates AS (
      SELECT e.id, e.type, e.payload, e.merchant_id, e.created_at
        FROM transaction_events e
       WHERE e.id = ${eventId} AND e.merchant_id = ${merchantId}::uuid
    ),
    ${restartSeries(SETTLED, traceparent, maxSeries)}
    SELECT (r.event_id IS NOT NULL) AS restarted,
           (SELECT d.manual_series >= ${maxSeries}::int FROM callback_deliveries d WHERE d.event_id = c.id) AS capped,
           json_build_object('id', c.id, 'type', c.type,
             'createdAt', ${raw(iso('c.created_at'))},
             'delivery', ${deliveryJson('c.id', 'r.status')}) AS event
      FROM candidates c LEFT JOIN restarted r ON r.event_id = c.id`;
  const [row] = await query<{ restarted: boolean; capped: boolean | null; event: RedeliveredEvent }>(db, redeliver);
  if (!row) return { kind: 'not_found' };
  if (!row.restarted) return { kind: row.capped ? 'series_cap' : 'in_progress' };
  ringOutboxDoorbell('manual_outbox');
  return { kind: 'redelivered', event: row.event };
}

export interface RecoveryWindow {
  since: string;
  until: string;
  type?: TransactionTypeName;
}

export type RecoverOutcome = { kind: 'recovered'; recovered: number } | { kind: 'too_many' };

/**
 * Every delivery of the merchant that ended failed or skipped, for events created in [since, until),
 * restarted in event order; nothing at all when the window holds more than RECOVERY_MAX_EVENTS.
 * The range walks unsuccessful_deliveries (merchant_id[, kind], created_at, event_id), which holds
 * only failed and skipped deliveries (kept by a trigger): the read costs what it finds, at most
 * RECOVERY_MAX_EVENTS + 1 entries, however many deliveries this or any merchant has had.
 */
export async function recoverDeliveries(
  db: pg.Pool,
  merchantId: string,
  window: RecoveryWindow,
  traceparent: string | null,
  maxSeries = DEFAULT_REDELIVERY_MAX_SERIES,
): Promise<RecoverOutcome> {
  const ofKind = window.type ? sql`AND u.kind = ${window.type}::transaction_type` : empty;
  const recover = sql`
    WITH candidates AS (
      SELECT e.id, e.type, e.payload, e.merchant_id, e.created_at
        FROM unsuccessful_deliveries u JOIN transaction_events e ON e.id = u.event_id
       WHERE u.merchant_id = ${merchantId}::uuid ${ofKind}
         AND u.created_at >= ${window.since}::timestamptz AND u.created_at < ${window.until}::timestamptz
       ORDER BY u.created_at, u.event_id
       LIMIT ${RECOVERY_MAX_EVENTS + 1}
    ),
    too_many AS (SELECT count(*) > ${RECOVERY_MAX_EVENTS} AS over FROM candidates),
    ${restartSeries(UNSUCCESSFUL, traceparent, maxSeries, sql`NOT (SELECT over FROM too_many)`)}
    SELECT (SELECT over FROM too_many) AS over, (SELECT count(*)::int FROM outboxed) AS recovered`;
  const [row] = await query<{ over: boolean; recovered: number }>(db, recover);
  if (!row || row.over) return { kind: 'too_many' };
  if (row.recovered > 0) ringOutboxDoorbell('manual_outbox');
  return { kind: 'recovered', recovered: row.recovered };
}
