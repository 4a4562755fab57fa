/**
 * The retention job as every transactions-svc replica runs it (EVENT_RETENTION_DAYS > 0): a sweep
 * every few minutes removes expired events in small batches until none is left, pausing between
 * batches so live traffic keeps the database. Replicas sweeping at once take disjoint batches
 * (removeExpiredEvents locks with SKIP LOCKED). A failed batch is logged and tried at the next sweep.
 */
import type pg from 'pg';
import { removeExpiredEvents } from './event-retention';

export interface RetentionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RetentionOptions {
  /** 0 keeps events forever (the job does nothing). */
  retentionDays: number;
  /** Events per batch (one transaction). */
  batchSize?: number;
  /** Between sweeps. */
  intervalMs?: number;
  /** Between the batches of one sweep. */
  pauseMs?: number;
}

export interface RetentionJob {
  /** One sweep now (resolves with the events removed); sweeps never overlap in one process. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

const DEFAULT_BATCH_SIZE = 500;
const DEFAULT_INTERVAL_MS = 5 * 60_000;
const DEFAULT_PAUSE_MS = 50;

export function startRetentionJob(pool: pg.Pool, logger: RetentionLogger, options: RetentionOptions): RetentionJob {
  // EVENT_RETENTION_DAYS=0: events are kept forever.
  if (options.retentionDays <= 0) return { sweep: async () => 0, stop: async () => undefined };
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const pauseMs = options.pauseMs ?? DEFAULT_PAUSE_MS;
  let stopped = false;
  let running: Promise<number> = Promise.resolve(0);

  const sweepOnce = async (): Promise<number> => {
    let removed = 0;
    let attempts = 0;
    try {
      while (!stopped) {
        const batch = await removeExpiredEvents(pool, options.retentionDays, batchSize);
        removed += batch.events;
        attempts += batch.attempts;
        // Done with the expired head, or nothing removable in it now (held elsewhere): next sweep.
        if (batch.seen < batchSize || batch.events === 0) break;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    } catch (err) {
      logger.warn({ err }, 'event retention batch failed; trying again at the next sweep');
    }
    if (removed > 0) logger.info({ events: removed, attempts, retentionDays: options.retentionDays }, 'expired events removed');
    return removed;
  };

  const sweep = () => (running = running.then(sweepOnce));
  // The first sweep soon after start, then one per interval.
  const first = setTimeout(() => void sweep(), Math.min(10_000, options.intervalMs ?? DEFAULT_INTERVAL_MS));
  const timer = setInterval(() => void sweep(), options.intervalMs ?? DEFAULT_INTERVAL_MS);
  first.unref();
  timer.unref();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
