/**
 * Step 1 of an attempt: claim it, and read what to send where. One statement for a whole batch of
 * messages (group commit): it claims `(event, attempt)` on each delivery row that is still open and
 * has not had that attempt yet, and reads the event, the merchant's URL for its type and its secret
 * as they are now, so a merchant who changes its URL or rotates its secret between attempts is
 * honoured at once.
 *
 * The claim makes one attempt chain per event: a second copy of a message (a lost ack, an outbox
 * row published twice) finds the attempt recorded, or claimed by a live claimant, and sends
 * nothing. A claim is a lease of the callback timeout plus a margin, so a copy redelivered after
 * its claimant died takes over once the lease has run out.
 */
import type { DeliveryStatus } from '@dw/db';
import type { Pool } from 'pg';

/** Settled for good: a message for such a delivery is a duplicate and needs no second request. */
const SETTLED: readonly DeliveryStatus[] = ['succeeded', 'failed', 'skipped'];

/**
 * "Not settled" as the delivery statements write it, rather than the open statuses: see CLAIM_SQL.
 * `d` is the alias of callback_deliveries in the statement.
 */
export const NOT_SETTLED_SQL = (d: string) => `${d}.status NOT IN (${SETTLED.map((s) => `'${s}'`).join(', ')})`;
/** Who started the current series: the event itself, or the merchant (redelivery, recovery). */
export type DeliveryTrigger = 'automatic' | 'manual';

/**
 * Where the current series stands: its attempts are numbered seriesStart+1 … seriesStart+6, so the
 * retry schedule counts from seriesStart (a redelivery starts a series after the earlier attempts).
 */
export interface Series {
  seriesStart: number;
  trigger: DeliveryTrigger;
}

export interface DeliveryTarget extends Series {
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  merchantId: string;
  /** The merchant's URL for this event's type now; null when none is set. */
  url: string | null;
  /** The live secrets, newest first: the current one, and the previous one during its overlap. */
  signingSecrets: string[];
}

export interface ClaimRequest {
  eventId: string;
  attempt: number;
}

export type Claim =
  | { kind: 'claimed'; target: DeliveryTarget }
  /** No such event (a message from another environment, or a purged row). */
  | { kind: 'unknown_event' }
  /** The delivery is settled for good: this message is a duplicate. */
  | { kind: 'settled'; status: DeliveryStatus }
  /** This attempt was already made and recorded; `attemptCount` attempts are recorded in all. */
  | ({ kind: 'done'; status: DeliveryStatus; attemptCount: number } & Series)
  /** Another copy holds the claim on this attempt right now (or held it and died: the lease runs out). */
  | { kind: 'busy' };

interface ClaimRow {
  event_id: string;
  claimed: boolean;
  status: DeliveryStatus | null;
  attempt_count: number | null;
  series_start: number | null;
  trigger: DeliveryTrigger | null;
  type: string | null;
  created_at: Date | null;
  merchant_id: string | null;
  deposit_callback_url: string | null;
  withdraw_callback_url: string | null;
  callback_signing_secret: string | null;
  /** The previous secret while its overlap lasts (expiry compared with the database's now()). */
  live_previous_signing_secret: string | null;
}

/**
 * The open statuses are written as "not settled" on purpose: `status IN ('pending', 'retrying')` is
 * the predicate of the sweeper's partial index, and PostgreSQL then claimed through that index,
 * reading every open delivery (10,000 during a drain of a backlog) to find the batch's few. Written
 * this way it can only look each one up by its key (test/claim-cost.test.ts).
 *
 * It is not a named (prepared) statement: PostgreSQL would plan it once for good when the service
 * starts, on a young database's small tables, as a scan of callback_deliveries and
 * transaction_events, and keep that plan while they grow until autovacuum next analyzes them
 * (seen with auto_explain: every claim of a benchmark run scanned both). Planned at each call, it
 * is costed on the tables as they are; that planning is a fraction of a millisecond per batch.
 */
export const CLAIM_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int[]) AS i(event_id, attempt)
  ),
  claimed AS (
    UPDATE callback_deliveries d
       SET claimed_attempt = i.attempt, claimed_until = now() + $3::int * interval '1 millisecond'
      FROM input i
     WHERE d.event_id = i.event_id
       AND ${NOT_SETTLED_SQL('d')}
       AND d.attempt_count < i.attempt
       AND (d.claimed_attempt IS DISTINCT FROM i.attempt OR d.claimed_until IS NULL OR d.claimed_until < now())
    RETURNING d.event_id
  )
  SELECT i.event_id, (c.event_id IS NOT NULL) AS claimed, d.status, d.attempt_count, d.series_start, d.trigger,
         e.type, e.created_at, e.merchant_id, m.deposit_callback_url, m.withdraw_callback_url, m.callback_signing_secret,
         CASE WHEN m.previous_signing_secret_expires_at > now() THEN m.previous_signing_secret END AS live_previous_signing_secret
    FROM input i
    LEFT JOIN claimed c ON c.event_id = i.event_id
    LEFT JOIN transaction_events e ON e.id = i.event_id
    LEFT JOIN callback_deliveries d ON d.event_id = i.event_id
    LEFT JOIN merchants m ON m.id = e.merchant_id`;

/** Claims a batch; the answers come in the order of `requests`. */
export async function claimDeliveries(pool: Pool, requests: ClaimRequest[], leaseMs: number): Promise<Claim[]> {
  // One claim per event per statement: a second copy in the same batch is simply busy.
  const first = new Map<string, ClaimRequest>();
  for (const r of requests) if (!first.has(r.eventId)) first.set(r.eventId, r);
  const unique = [...first.values()];
  const { rows } = await pool.query<ClaimRow>({ text: CLAIM_SQL, values: [unique.map((r) => r.eventId), unique.map((r) => r.attempt), leaseMs] });
  const byEvent = new Map(rows.map((row) => [row.event_id, row]));
  return requests.map((r) => (first.get(r.eventId) === r ? toClaim(byEvent.get(r.eventId), r.attempt) : { kind: 'busy' }));
}

function toClaim(row: ClaimRow | undefined, attempt: number): Claim {
  if (!row || row.type === null || row.status === null) return { kind: 'unknown_event' };
  const series: Series = { seriesStart: row.series_start ?? 0, trigger: row.trigger ?? 'automatic' };
  if (row.claimed) {
    return {
      kind: 'claimed',
      target: {
        eventId: row.event_id,
        eventType: row.type,
        eventCreatedAt: row.created_at!,
        merchantId: row.merchant_id!,
        url: urlForEventType(row.type, { deposit: row.deposit_callback_url, withdraw: row.withdraw_callback_url }),
        signingSecrets: row.live_previous_signing_secret
          ? [row.callback_signing_secret!, row.live_previous_signing_secret]
          : [row.callback_signing_secret!],
        ...series,
      },
    };
  }
  if (isSettled(row.status)) return { kind: 'settled', status: row.status };
  const attemptCount = row.attempt_count ?? 0;
  return attemptCount >= attempt ? { kind: 'done', status: row.status, attemptCount, ...series } : { kind: 'busy' };
}

/** Deposit events go to the deposit URL, withdraw events to the withdraw URL (docs/callbacks.md). */
export function urlForEventType(eventType: string, urls: { deposit: string | null; withdraw: string | null }): string | null {
  if (eventType.startsWith('deposit.')) return urls.deposit;
  if (eventType.startsWith('withdraw.')) return urls.withdraw;
  return null;
}

function isSettled(status: DeliveryStatus): boolean {
  return SETTLED.includes(status);
}
