/**
 * Gives up a claim without recording an attempt: a send cut short by shutdown before its request was
 * written, or one whose attempt could not be recorded and retried in time (settle-aborted.ts). The
 * message goes back to RabbitMQ; released, its copy can take the attempt on another replica at once
 * instead of waiting for the lease (callback timeout plus a margin) to run out.
 *
 * Best effort and bounded: a database that does not answer within `withinMs` leaves the claim to its
 * lease, which is what would happen had the process been killed.
 */
import type { Pool } from 'pg';

const RELEASE = `UPDATE callback_deliveries SET claimed_until = NULL WHERE event_id = $1 AND claimed_attempt = $2`;

/** Resolves true when the claim was released (or was no longer held), false when it could not be. */
export async function releaseClaim(pool: Pool, eventId: string, attempt: number, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
  });
  try {
    return await Promise.race([pool.query(RELEASE, [eventId, attempt]).then(() => true), gaveUp]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
