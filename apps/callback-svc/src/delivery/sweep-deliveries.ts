/**
 * The sweeper: the database is the record of what must still be delivered, so a delivery that is
 * pending or retrying while nothing has been seen of it for longer than any wait (the longest
 * retry wait, plus the longest throttle wait, plus the timeout, plus a margin) has lost its message
 * — parked past the delivery limit, or dropped by a broker. Any replica publishes it again as its
 * next attempt, to the manual lane (a sweep after an outage can be large: it must not stand in front
 * of new events); the claim on (event, attempt) turns a copy that was not lost after all into a no-op.
 *
 * "Seen" is the row's updated_at: written when the delivery is created, when an attempt is claimed
 * and recorded, and when a message is throttled. Rows are claimed with SKIP LOCKED (replicas share
 * the work), published with confirms, then stamped, in one transaction: confirm then mark, like
 * the outbox relay, with the same bound on how long the broker may take to confirm. The sweep
 * holds off while either lane's queue has messages ready (they are live and will be seen; a large
 * recovery can wait in the manual queue for longer than any wait) and skips events whose outbox row
 * (either table's) is not yet published.
 */
import { callbackBody, type CallbackEvent } from '@dw/contracts';
import { ATTEMPT_HEADER, confirmedWithin, MERCHANT_HEADER, publishConfirmed, type AmqpConnection, type MessagingLogger, type MessagingNames } from '@dw/messaging';
import { inTransaction } from '@dw/db';
import type { Pool } from 'pg';
import { sweptDeliveries } from './delivery-metrics';
import { markSeen } from './record-attempt';

export interface SweeperOptions {
  pool: Pool;
  amqp: AmqpConnection;
  names: MessagingNames;
  intervalMs: number;
  /** Unseen this long, a pending or retrying delivery is published again. */
  staleAfterMs: number;
  logger: MessagingLogger;
  batchSize?: number;
  /** How long claimed rows stay locked while the broker does not confirm (default 30 s, as the relay). */
  confirmTimeoutMs?: number;
}

export interface Sweeper {
  /** One pass now; resolves with how many deliveries were published again. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

interface StaleRow {
  event_id: string;
  attempt_count: number;
  merchant_id: string;
  traceparent: string | null;
  payload: CallbackEvent;
}

const CLAIM_STALE = `
  SELECT d.event_id, d.attempt_count, e.merchant_id::text AS merchant_id, e.traceparent, e.payload
    FROM callback_deliveries d
    JOIN transaction_events e ON e.id = d.event_id
   WHERE d.status IN ('pending', 'retrying')
     AND d.updated_at < now() - $1::int * interval '1 millisecond'
     AND (d.claimed_until IS NULL OR d.claimed_until < now())
     AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = d.event_id)
     AND NOT EXISTS (SELECT 1 FROM manual_outbox o WHERE o.event_id = d.event_id)
   ORDER BY d.updated_at
   LIMIT $2
     FOR UPDATE OF d SKIP LOCKED`;

export function startSweeper(opts: SweeperOptions): Sweeper {
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;
  const pass = () => {
    running = running.then(() => (stopped ? 0 : sweepOnce(opts))).catch((err: unknown) => {
      opts.logger.warn({ err: { message: (err as Error).message } }, 'delivery sweep failed; trying again at the next interval');
      return 0;
    });
    return running;
  };
  const timer = setInterval(pass, opts.intervalMs);
  timer.unref();
  return {
    sweep: pass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

async function sweepOnce({ pool, amqp, names, staleAfterMs, logger, batchSize = 500, confirmTimeoutMs = 30_000 }: SweeperOptions): Promise<number> {
  if (!amqp.isConnected()) return 0;
  const channel = await amqp.confirmChannel();
  for (const queue of [names.deliverQueue, names.manualQueue]) {
    if ((await channel.checkQueue(queue)).messageCount > 0) return 0;
  }
  const swept = await inTransaction(pool, async (client) => {
    const { rows } = await client.query<StaleRow>(CLAIM_STALE, [staleAfterMs, batchSize]);
    // Published back to back, then every confirm awaited together (one round trip, not one per row),
    // for a bounded time; the connection's close waits for them.
    const published = Promise.all(
      rows.map((row) => {
        const headers: Record<string, unknown> = { [ATTEMPT_HEADER]: row.attempt_count + 1, [MERCHANT_HEADER]: row.merchant_id };
        if (row.traceparent) headers.traceparent = row.traceparent;
        return publishConfirmed(channel, '', names.manualQueue, Buffer.from(callbackBody(row.payload)), {
          headers,
          messageId: row.event_id,
          contentType: 'application/json',
          mandatory: true,
        });
      }),
    );
    await confirmedWithin(amqp.track(published), confirmTimeoutMs);
    if (rows.length > 0) await markSeen(client, rows.map((r) => r.event_id));
    return rows;
  });
  if (swept.length > 0) {
    sweptDeliveries.inc(swept.length);
    logger.warn({ count: swept.length, eventIds: swept.slice(0, 10).map((r) => r.event_id) }, 'published deliveries again that nothing had been seen of');
  }
  return swept.length;
}
