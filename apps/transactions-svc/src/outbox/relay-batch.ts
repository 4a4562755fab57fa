/**
 * One pass of the relay: claim a batch of rows, publish them, delete them only after the broker
 * confirmed every one, all inside one PostgreSQL transaction. The table holds only what is still
 * to be published, so a claim costs the same however long the service has lived.
 *
 * `FOR UPDATE SKIP LOCKED` lets replicas share the table: a row claimed by one relay is invisible
 * to the others until that relay commits (then it is published and gone) or rolls back (then it is up for
 * grabs again). A crash between the confirms and the COMMIT publishes the batch again: at least
 * once, which callback-svc and merchants (dedupe on the event id) are built for.
 *
 * A batch is shared between the merchants that have rows waiting: each gets its oldest rows, up to
 * an equal share of the batch (batchSize ÷ merchants waiting, at least one), not the table's
 * oldest rows. Taken in id order alone, one merchant creating the largest rows the API admits at
 * its rate limit kept every other merchant's new events behind its backlog in the table, and their
 * callbacks came up to 33 s late (found by an outside audit). Each merchant's rows still go out in
 * id order (so a transaction's events in sequence order); the batch is published in id order. The
 * merchants waiting are found by skipping through the (merchant_id, id) index, one step per
 * merchant (at most batchSize of them a batch), and each one's rows by its own range of that index:
 * what a claim reads grows with the merchants waiting, never with one merchant's backlog. Rows
 * without a merchant (written by a version from before the column) are one more share.
 */
import { confirmedWithin } from '@dw/messaging';
import { inTransaction } from '@dw/db';
import type { ConfirmChannel } from 'amqplib';
import type pg from 'pg';
import { publishOutboxRow, type OutboxRow } from './publish-outbox-row';

/** The two outbox tables: new events, and the manual lane's series (recoveries, redeliveries). */
export type OutboxTable = 'outbox' | 'manual_outbox';

const claimText = (table: OutboxTable) => `
  WITH RECURSIVE waiting(merchant_id, n) AS (
    (SELECT merchant_id, 1 FROM ${table} WHERE merchant_id IS NOT NULL ORDER BY merchant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT o.merchant_id FROM ${table} o WHERE o.merchant_id > w.merchant_id ORDER BY o.merchant_id LIMIT 1), w.n + 1
      FROM waiting w WHERE w.merchant_id IS NOT NULL AND w.n < $1
  ),
  merchants AS (SELECT merchant_id FROM waiting WHERE merchant_id IS NOT NULL),
  share AS (SELECT greatest(1, ceil($1::numeric / greatest(count(*), 1)))::int AS per FROM merchants)
  SELECT * FROM (
    SELECT c.*, s.per FROM merchants m CROSS JOIN share s CROSS JOIN LATERAL (
      SELECT o.id, o.event_id, o.merchant_id, o.routing_key, o.payload, o.headers FROM ${table} o
       WHERE o.merchant_id = m.merchant_id ORDER BY o.merchant_id, o.id LIMIT s.per FOR UPDATE SKIP LOCKED) c
    UNION ALL
    SELECT c.*, s.per FROM share s CROSS JOIN LATERAL (
      SELECT o.id, o.event_id, o.merchant_id, o.routing_key, o.payload, o.headers FROM ${table} o
       WHERE o.merchant_id IS NULL ORDER BY o.merchant_id, o.id LIMIT s.per FOR UPDATE SKIP LOCKED) c
  ) claimed ORDER BY id`;

const statements = (table: OutboxTable) => ({
  claim: { name: `relay_claim_${table}`, text: claimText(table) },
  sent: { name: `relay_delete_sent_${table}`, text: `DELETE FROM ${table} WHERE id = ANY($1::bigint[])` },
});
const STATEMENTS = { outbox: statements('outbox'), manual_outbox: statements('manual_outbox') };

export interface BatchOptions {
  pool: pg.Pool;
  table: OutboxTable;
  channel: ConfirmChannel;
  exchange: string;
  batchSize: number;
  /** Bounds how long claimed rows stay locked when the broker stalls (flow control, a hung socket). */
  confirmTimeoutMs: number;
  /** Lets the AMQP connection's close wait for publishes under way. */
  track: <T>(work: Promise<T>) => Promise<T>;
}

export interface BatchResult {
  published: number;
  /** A merchant had more rows waiting than its share: claim again at once. */
  more: boolean;
}

type ClaimedRow = OutboxRow & { merchant_id: string | null; per: number };

export async function relayBatch(opts: BatchOptions): Promise<BatchResult> {
  const { claim, sent } = STATEMENTS[opts.table];
  return inTransaction(opts.pool, async (client) => {
    const { rows } = await client.query<ClaimedRow>({ ...claim, values: [opts.batchSize] });
    if (rows.length > 0) {
      await confirmedWithin(opts.track(publishAll(opts, rows)), opts.confirmTimeoutMs);
      await client.query({ ...sent, values: [rows.map((r) => r.id)] });
    }
    return { published: rows.length, more: filledAShare(rows) };
  });
}

function filledAShare(rows: ClaimedRow[]): boolean {
  const per = rows[0]?.per ?? Infinity;
  const counts = new Map<string | null, number>();
  for (const row of rows) {
    const n = (counts.get(row.merchant_id) ?? 0) + 1;
    if (n >= per) return true;
    counts.set(row.merchant_id, n);
  }
  return false;
}

// Published back to back on one channel, so the broker enqueues them in id order (and so in
// sequence order for one transaction); then every confirm is awaited together.
function publishAll({ channel, exchange }: BatchOptions, rows: OutboxRow[]): Promise<void> {
  return Promise.all(rows.map((row) => publishOutboxRow(channel, exchange, row))).then(() => undefined);
}

