/**
 * Bounded growth (EVENT_RETENTION_DAYS): events, their deliveries and their attempts older than the
 * retention are removed, oldest first, a small batch per transaction. Transactions are kept.
 *
 * Each batch finds its events through transaction_events(created_at), so it reads the expired head
 * of the history and nothing else. Replicas share the work without colliding: the events of a
 * batch are locked `FOR UPDATE SKIP LOCKED`, so a second replica takes the next ones.
 *
 * Never removed: an event whose outbox row is still there (not yet published to RabbitMQ), and an
 * event whose delivery is under way (`pending`/`retrying`). The delivery rows of a batch are locked
 * before anything is deleted and their status read again, so a delivery that something started
 * again meanwhile (a redelivery) is left alone together with its event.
 */
import { inTransaction } from '@dw/db';
import type pg from 'pg';

export interface RetentionBatch {
  /** Events removed (with their deliveries and attempts). */
  events: number;
  attempts: number;
  /** Expired events this batch looked at: fewer than the batch size means the head is done. */
  seen: number;
}

const UNDER_WAY = ['pending', 'retrying'];

// A manual_outbox row needs no check of its own: the statement that writes it sets the delivery
// back to pending, and a pending delivery keeps its event.
export const EXPIRED_EVENTS_SQL = `
  SELECT e.id
    FROM transaction_events e
   WHERE e.created_at < now() - make_interval(days => $1::int)
     AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.id)
     AND NOT EXISTS (SELECT 1 FROM callback_deliveries d WHERE d.event_id = e.id AND d.status = ANY($3::delivery_status[]))
   ORDER BY e.created_at
   LIMIT $2
   FOR UPDATE OF e SKIP LOCKED`;

const DELIVERY_ROWS = `SELECT event_id FROM callback_deliveries WHERE event_id = ANY($1::text[])`;
/** The batch's delivery rows this transaction can lock, each with its status as of the lock. */
const LOCK_DELIVERIES = `
  SELECT event_id, status::text AS status FROM callback_deliveries
   WHERE event_id = ANY($1::text[])
   FOR UPDATE SKIP LOCKED`;

/** Removes one batch of expired events; resolves with what it did. */
export async function removeExpiredEvents(pool: pg.Pool, retentionDays: number, batchSize: number): Promise<RetentionBatch> {
  return inTransaction(pool, async (client) => {
    const expired = (await client.query<{ id: string }>(EXPIRED_EVENTS_SQL, [retentionDays, batchSize, UNDER_WAY])).rows.map((r) => r.id);
    if (expired.length === 0) return { events: 0, attempts: 0, seen: 0 };
    // An event goes with its delivery only when that delivery is locked here and settled.
    const withDelivery = new Set((await client.query<{ event_id: string }>(DELIVERY_ROWS, [expired])).rows.map((r) => r.event_id));
    const locked = (await client.query<{ event_id: string; status: string }>(LOCK_DELIVERIES, [expired])).rows;
    const settled = new Set(locked.filter((d) => !UNDER_WAY.includes(d.status)).map((d) => d.event_id));
    const ids = expired.filter((id) => !withDelivery.has(id) || settled.has(id));
    // Children first, in one transaction: no attempt or delivery outlives its event.
    const attempts = await client.query('DELETE FROM callback_attempts WHERE event_id = ANY($1::text[])', [ids]);
    await client.query('DELETE FROM callback_deliveries WHERE event_id = ANY($1::text[])', [ids]);
    const events = await client.query('DELETE FROM transaction_events WHERE id = ANY($1::text[])', [ids]);
    return { events: events.rowCount ?? 0, attempts: attempts.rowCount ?? 0, seen: expired.length };
  });
}
