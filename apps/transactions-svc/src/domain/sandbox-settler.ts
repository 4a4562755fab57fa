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
  // An outage is told once (warn), then at debug level each tick, and its end once (info), as the
  // outbox relay tells its own: a database that is away must not fill the log four lines a second.
  let failures = 0;
  const tick = async () => {
    try {
      // Drain in batches so a burst of creates settles on time.
      while (!stopped && (await settleDue(db, settleMs)) > 0);
      if (failures > 0) log.info({ failures }, 'sandbox settler settling again');
      failures = 0;
    } catch (err) {
      failures += 1;
      if (failures === 1) log.warn({ err }, 'sandbox settler tick failed; retrying every tick, told again when it settles');
      else log.debug({ err, failures }, 'sandbox settler tick failed again');
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
