/**
 * Demo settlement (SANDBOX_SETTLE_MS > 0): pending transactions complete (or fail, for a .66
 * fraction) that many ms after creation. Off in production configurations.
 */
import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import { settleDue } from './transactions-repo';

export interface Settler {
  stop(): Promise<void>;
}

export function startSandboxSettler(db: pg.Pool, settleMs: number, log: FastifyBaseLogger): Settler {
  const tickMs = Math.min(250, Math.max(20, Math.floor(settleMs / 4)));
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = async () => {
    try {
      // Drain in batches so a burst of creates settles on time.
      while (!stopped && (await settleDue(db, settleMs)) > 0);
    } catch (err) {
      log.warn({ err }, 'sandbox settler tick failed; retrying');
    }
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, tickMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
