/**
 * SQL shared by every write and read of a transaction. A status change is one statement: the
 * transaction row, its event (with the next per-transaction sequence), the event's delivery row,
 * its outbox row and, where money moves, its ledger entry and balance are written together or not at all (a CTE: one round trip, about twice the
 * throughput of BEGIN/INSERT…/COMMIT when measured here).
 */
import { MERCHANT_HEADER } from '@dw/messaging';
import { raw, sql, Sql } from '@dw/db';
import { ledgerCtes } from './ledger-sql';

/** An instant as the API writes it (ISO 8601, UTC, milliseconds, `Z`), as SQL text for `column`. */
export const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Whether the callback_attempts row aliased `alias` acknowledged its event: a `200` whose reply came
 * whole within the timeout. callback-svc records a `200` it could not finish reading (the body
 * still arriving at 15 s) or was stopped while reading with the status and an `error`, and retries
 * it; every summary of attempts (the export's acknowledgedAt, endpoint health) counts it as callback-svc did.
 */
export const acknowledged = (alias: string) => `(${alias}.status_code = 200 AND ${alias}.error IS NULL)`;

/**
 * When the attempt aliased `alias` ended: its start (`at`, as the attempts list shows it) plus its
 * duration. For an acknowledging attempt, the time the endpoint's whole 200 arrived: what the
 * export's acknowledgedAt and endpoint health's lastSuccessAt say, up to 15 s after `at`.
 */
export const endedAt = (alias: string) => `(${alias}.at + ${alias}.duration_ms * interval '1 millisecond')`;

/** The public transaction object (docs/api.md#transactions) built from a row aliased `alias`; json keeps key order. */
export const transactionJson = (alias: string) =>
  raw(`json_build_object(
    'id', ${alias}.id, 'type', ${alias}.type, 'status', ${alias}.status,
    'amount', ${alias}.amount::text, 'currency', ${alias}.currency, 'orderId', ${alias}.order_id,
    'description', ${alias}.description, 'metadata', ${alias}.metadata, 'destination', ${alias}.destination,
    'createdAt', ${iso(`${alias}.created_at`)}, 'updatedAt', ${iso(`${alias}.updated_at`)})`);

/** For withEventsFor: each event takes the traceparent stored on its transaction (creates). */
export const ROW_TRACEPARENT = raw('s.traceparent');

/**
 * Given a CTE named `changed` holding the rows just inserted or updated, appends the CTEs that record
 * the event of each row's new status, its pending delivery, its outbox message and, where the status
 * moves money, its ledger entry and balance (ledger-sql.ts), and selects the
 * transactions as JSON (column `tx`) with their merchant (`merchant_id`). The message carries its
 * merchant in a header, so callback-svc can apply the merchant's share of delivery capacity before
 * it reads anything. `traceparent` is one for every row, or ROW_TRACEPARENT.
 * Run it through `writeWithEvents`, which wakes the relay after the commit.
 */
export function withEventsFor(changedCte: Sql, reason: string | null, traceparent: string | null | Sql): Sql {
  const eventTraceparent = traceparent instanceof Sql ? traceparent : sql`${traceparent}::text`;
  return sql`
    WITH changed AS (${changedCte}),
    shaped AS (
      SELECT c.*, ${transactionJson('c')} AS data,
             'evt_' || replace(uuid_v7()::text, '-', '') AS event_id,
             c.type::text || '.' || c.status::text AS event_type
      FROM changed c
    ),
    events AS (
      INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, reason, payload, traceparent, created_at)
      SELECT s.event_id, s.id, s.merchant_id, s.last_sequence, s.event_type, s.status, ${reason}::text,
             json_build_object('id', s.event_id, 'type', s.event_type, 'createdAt', ${raw(iso('s.updated_at'))},
                               'sequence', s.last_sequence, 'data', s.data)::jsonb,
             ${eventTraceparent}, s.updated_at
      FROM shaped s
      RETURNING id, merchant_id, type, payload, traceparent
    ),
    deliveries AS (
      INSERT INTO callback_deliveries (event_id) SELECT id FROM events
    ),
    outboxed AS (
      INSERT INTO outbox (event_id, merchant_id, routing_key, payload, headers)
      SELECT e.id, e.merchant_id, e.type, e.payload,
             jsonb_build_object(${MERCHANT_HEADER}::text, e.merchant_id)
               || CASE WHEN e.traceparent IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('traceparent', e.traceparent) END
      FROM events e
    ),
    ${ledgerCtes(reason)}
    SELECT data AS tx, merchant_id::text AS merchant_id FROM shaped`;
}
