/**
 * One pass of the relay: claim a batch of rows, publish them, delete them only after the broker
 * confirmed every one, all inside one PostgreSQL transaction. The table holds only what is still
 * to be published, so a claim costs the same however long the service has lived.
 *
 * `FOR UPDATE SKIP LOCKED` lets replicas share the table: a row claimed by one relay is invisible
 * to the others until that relay commits (then it is published and gone) or rolls back (then it is up for
 * grabs again). A crash between the confirms and the COMMIT publishes the batch again: at least
 * once, which callback-svc and merchants (dedupe on the event id) are built for.
 */
import { confirmedWithin } from '@dw/messaging';
import { inTransaction } from '@dw/db';
import type { ConfirmChannel } from 'amqplib';
import type pg from 'pg';
import { publishOutboxRow, type OutboxRow } from './publish-outbox-row';

/** The two outbox tables: new events, and the manual lane's series (recoveries, redeliveries). */
export type OutboxTable = 'outbox' | 'manual_outbox';

const statements = (table: OutboxTable) => ({
  claim: {
    name: `relay_claim_${table}`,
    text: `SELECT id, event_id, routing_key, payload, headers FROM ${table} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
  },
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

/** Returns how many rows were published (fewer than batchSize: the table is drained for now). */
export async function relayBatch(opts: BatchOptions): Promise<number> {
  const { claim, sent } = STATEMENTS[opts.table];
  return inTransaction(opts.pool, async (client) => {
    const { rows } = await client.query<OutboxRow>({ ...claim, values: [opts.batchSize] });
    if (rows.length > 0) {
      await confirmedWithin(opts.track(publishAll(opts, rows)), opts.confirmTimeoutMs);
      await client.query({ ...sent, values: [rows.map((r) => r.id)] });
    }
    return rows.length;
  });
}

// Published back to back on one channel, so the broker enqueues them in id order (and so in
// sequence order for one transaction); then every confirm is awaited together.
function publishAll({ channel, exchange }: BatchOptions, rows: OutboxRow[]): Promise<void> {
  return Promise.all(rows.map((row) => publishOutboxRow(channel, exchange, row))).then(() => undefined);
}

