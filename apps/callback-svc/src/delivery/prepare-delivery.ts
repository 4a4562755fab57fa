/**
 * Step 1 of an attempt: what to send where, read fresh from the database for every attempt, so a
 * merchant who changes its callback URL or rotates its secret between attempts is honoured at once.
 */
import type { Pool } from 'pg';

export type DeliveryStatus = 'pending' | 'succeeded' | 'retrying' | 'failed' | 'skipped';

export interface DeliveryTarget {
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  /** The merchant's URL for this event's type now; null when none is set. */
  url: string | null;
  signingSecret: string;
  /** The live secrets, newest first: the current one, and the previous one during its overlap. */
  signingSecrets: string[];
  /** null when the event has no delivery row (should not happen: it is created with the event). */
  status: DeliveryStatus | null;
}

interface TargetRow {
  id: string;
  type: string;
  created_at: Date;
  deposit_callback_url: string | null;
  withdraw_callback_url: string | null;
  callback_signing_secret: string;
  /** The previous secret while its overlap lasts (expiry compared with the database's now()). */
  live_previous_signing_secret: string | null;
  status: DeliveryStatus | null;
}

/** Deposit events go to the deposit URL, withdraw events to the withdraw URL (CONTRACT 5). */
export function urlForEventType(eventType: string, urls: { deposit: string | null; withdraw: string | null }): string | null {
  if (eventType.startsWith('deposit.')) return urls.deposit;
  if (eventType.startsWith('withdraw.')) return urls.withdraw;
  return null;
}

/** Undefined when no such event exists (a message from another environment, or a purged row). */
export async function prepareDelivery(pool: Pool, eventId: string): Promise<DeliveryTarget | undefined> {
  const { rows } = await pool.query<TargetRow>(
    `SELECT e.id, e.type, e.created_at, m.deposit_callback_url, m.withdraw_callback_url, m.callback_signing_secret,
            CASE WHEN m.previous_signing_secret_expires_at > now() THEN m.previous_signing_secret END AS live_previous_signing_secret,
            d.status
       FROM transaction_events e
       JOIN merchants m ON m.id = e.merchant_id
       LEFT JOIN callback_deliveries d ON d.event_id = e.id
      WHERE e.id = $1`,
    [eventId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    eventId: row.id,
    eventType: row.type,
    eventCreatedAt: row.created_at,
    url: urlForEventType(row.type, { deposit: row.deposit_callback_url, withdraw: row.withdraw_callback_url }),
    signingSecret: row.callback_signing_secret,
    signingSecrets: row.live_previous_signing_secret
      ? [row.callback_signing_secret, row.live_previous_signing_secret]
      : [row.callback_signing_secret],
    status: row.status,
  };
}

/**
 * A delivery already settled for good: a message for it is a duplicate (the broker redelivered it
 * because an ack was lost after the outcome was written), so it needs no second request.
 */
export function isSettled(status: DeliveryStatus | null): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'skipped';
}
