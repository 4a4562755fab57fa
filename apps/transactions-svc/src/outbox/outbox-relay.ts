/**
 * The outbox relay: moves committed outbox rows to RabbitMQ's events exchange. It wakes when this
 * process commits outbox rows (the doorbell; it polls as the fallback, which also finds rows another
 * replica left behind), drains the table a batch at a time, and while
 * RabbitMQ (or PostgreSQL) is away it leaves the rows where they are and tries again with backoff:
 * creates never wait for the broker, and nothing is lost while it is down.
 *
 * It asserts the callback topology on every connection of the AmqpConnection it is given, so an
 * event is never published into an exchange with no queue bound, even before callback-svc first
 * started (`mandatory` publishes would otherwise come back unroutable).
 */
import { assertTopology, callbackTopology, messagingNames, type AmqpConnection, type MessagingLogger } from '@dw/messaging';
import { createPool } from '@dw/db';
import type pg from 'pg';
import { onOutboxDoorbell } from './doorbell';
import { outboxLag, outboxPassFailures, outboxPublished } from './outbox-metrics';
import { relayBatch } from './relay-batch';
import { Wakeup } from './wakeup';

export interface OutboxRelayOptions {
  databaseUrl: string;
  /** Started (or to be started) by the caller; the relay registers its topology on it. */
  amqp: AmqpConnection;
  prefix: string;
  retryDelaysMs: readonly number[];
  /** callback-svc's CALLBACK_DELIVERY_LIMIT: the relay asserts the same delivery queue. */
  deliveryLimit?: number;
  logger: MessagingLogger;
  /** Rows claimed per transaction (default 100). */
  batchSize?: number;
  /** The fallback poll when no NOTIFY comes (default 1000). */
  pollIntervalMs?: number;
  /** How long claimed rows may wait for the broker's confirms before the pass gives up (default 30000). */
  confirmTimeoutMs?: number;
}

export interface OutboxRelay {
  /** Finishes the pass under way (or abandons its wait), then closes the relay's PostgreSQL sessions. */
  stop(): Promise<void>;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
const FOREVER_MS = 2 ** 31 - 1;

export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { amqp, logger } = opts;
  const topology = callbackTopology({ prefix: opts.prefix, retryDelaysMs: opts.retryDelaysMs, deliveryLimit: opts.deliveryLimit });
  amqp.onConnected(async (ctx) => {
    // A plain channel, not ctx.createChannel(): closing one of those counts as a fault. A failed
    // assertion rejects here, and the connection manager then retries the whole connection.
    const channel = await ctx.connection.createChannel();
    channel.on('error', () => undefined);
    await assertTopology(channel, topology);
    await channel.close();
  });

  // One session for the passes (they run one at a time) and one spare for the lag check.
  const pool = createPool(opts.databaseUrl, 2, {
    applicationName: 'dw-outbox-relay',
    onIdleError: (err) => logger.warn({ err: { message: err.message } }, 'outbox relay lost an idle PostgreSQL session'),
  });
  const wakeup = new Wakeup();
  const loop = new RelayLoop(opts, pool, wakeup);
  const unsubscribe = onOutboxDoorbell((table) => {
    if (table === 'manual_outbox') loop.manualRung = true;
    wakeup.wake();
  });
  const running = loop.run();

  let stopped: Promise<void> | undefined;
  const stop = async () => {
    loop.stopped = true;
    wakeup.stop();
    unsubscribe();
    await running;
    await pool.end();
  };
  return { stop: () => (stopped ??= stop()) };
}

class RelayLoop {
  stopped = false;
  /** This process committed manual_outbox rows since the last look at that table. */
  manualRung = true;
  private manualClaimedAt = 0;
  private lagRefreshedAt = 0;
  private failures = 0;
  private connected?: Promise<void>;
  private readonly exchange: string;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly opts: OutboxRelayOptions,
    private readonly pool: pg.Pool,
    private readonly wakeup: Wakeup,
  ) {
    this.exchange = messagingNames(opts.prefix).eventsExchange;
    this.batchSize = opts.batchSize ?? 100;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.opts.amqp.isConnected()) {
        await this.refreshLag();
        await this.wakeup.race(this.whenConnected(), this.pollIntervalMs);
        continue;
      }
      try {
        await this.drain();
        this.recovered();
        await this.refreshLag();
        await this.wakeup.untilWoken(this.pollIntervalMs);
      } catch (err) {
        await this.failed(err);
      }
    }
  }

  /**
   * Batches until one comes back short: a burst is drained in one wake-up. New events are claimed
   * on every round, and the manual lane's table (recoveries, redeliveries) in turn with them while
   * it has rows, so a recovery of thousands of rows holds new events back by one batch at most.
   * The manual table is looked at when this process rang for it, and otherwise once a poll interval
   * (rows another replica left behind): not on every pass of a busy create path.
   */
  private async drain(): Promise<void> {
    const channel = await this.unlessStopped(this.opts.amqp.confirmChannel());
    if (!channel) return;
    const batch = {
      pool: this.pool,
      channel,
      exchange: this.exchange,
      batchSize: this.batchSize,
      confirmTimeoutMs: this.opts.confirmTimeoutMs ?? 30_000,
      track: <T>(work: Promise<T>) => this.opts.amqp.track(work),
    };
    let manual = this.manualRung || Date.now() - this.manualClaimedAt >= this.pollIntervalMs;
    this.manualRung = false;
    for (;;) {
      const events = await relayBatch({ ...batch, table: 'outbox' });
      outboxPublished.inc(events.published);
      if (manual && !this.stopped) {
        this.manualClaimedAt = Date.now();
        const series = await relayBatch({ ...batch, table: 'manual_outbox' });
        outboxPublished.inc(series.published);
        manual = series.more;
      }
      // A backlog that keeps the loop here must not freeze outbox_lag_seconds (found by an outside
      // audit: it read 0.8 s for 50 s while the oldest row aged to 16.5 s).
      if (Date.now() - this.lagRefreshedAt >= this.pollIntervalMs) await this.refreshLag();
      if ((!events.more && !manual) || this.stopped) return;
    }
  }

  // One waiter per outage on the connection, not one per poll. A closed connection never comes
  // back: then only the poll (or stop) ends the wait, rather than a spin.
  private whenConnected(): Promise<void> {
    this.connected ??= this.opts.amqp.whenConnected().then(
      () => {
        this.connected = undefined;
      },
      () => new Promise<void>(() => undefined),
    );
    return this.connected;
  }

  // The connection may drop between isConnected() and here; stop() must not wait for its return.
  private async unlessStopped<T>(work: Promise<T>): Promise<T | undefined> {
    let result: { value: T } | { error: unknown } | undefined;
    const outcome = work.then(
      (value) => (result = { value }),
      (error: unknown) => (result = { error }),
    );
    await this.wakeup.race(outcome, FOREVER_MS);
    if (!result) return undefined; // stopped first
    if ('error' in result) throw result.error;
    return result.value;
  }

  private async failed(err: unknown): Promise<void> {
    outboxPassFailures.inc();
    this.manualRung = true; // the failed pass may have been the manual table's
    const delay = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** this.failures++);
    const log = this.failures === 1 ? this.opts.logger.warn : (this.opts.logger.debug ?? this.opts.logger.warn);
    log.call(this.opts.logger, { err: describe(err), retryInMs: delay }, 'outbox relay pass failed; rows stay pending');
    await this.wakeup.sleep(delay);
  }

  private recovered(): void {
    if (this.failures > 0) this.opts.logger.info({ failures: this.failures }, 'outbox relay publishing again');
    this.failures = 0;
  }

  private async refreshLag(): Promise<void> {
    this.lagRefreshedAt = Date.now();
    try {
      const { rows } = await this.pool.query<{ lag: number | null }>(
        `SELECT extract(epoch FROM now() - least((SELECT created_at FROM outbox ORDER BY id LIMIT 1),
                                                  (SELECT created_at FROM manual_outbox ORDER BY id LIMIT 1)))::float8 AS lag`,
      );
      outboxLag.set(Math.max(0, rows[0]?.lag ?? 0));
    } catch {
      // PostgreSQL is away: the gauge keeps its last value; the pass that follows reports the error.
    }
  }
}

function describe(err: unknown): object {
  return err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) };
}
