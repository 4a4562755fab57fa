/**
 * Every replica checks, once a minute, that each balance equals its newest ledger entry (one index
 * look-up per balance: its cost follows the number of balances, never the ledger's length) and
 * publishes the count as ledger_balance_check_differences, which the DWLedgerDifferences alert
 * watches; it logs up to 20 of them by merchant and currency. `npm run ledger:verify` (in the image:
 * `node dist/cli/ledger.js verify`) is the full recount an operator runs to see what differs.
 */
import type pg from 'pg';
import { balancesDifferingFromLastEntry } from '../domain/ledger-verify';
import { balanceCheckDifferences, balanceCheckTimestamp } from './ledger-metrics';

export interface BalanceCheckJob {
  check(): Promise<number>;
  stop(): Promise<void>;
}

const INTERVAL_MS = 60_000;

export function startBalanceCheckJob(pool: pg.Pool, logger: { warn(obj: object, msg: string): void }, intervalMs = INTERVAL_MS): BalanceCheckJob {
  let running: Promise<number> = Promise.resolve(0);
  const checkOnce = async () => {
    try {
      const { differing, examples } = await balancesDifferingFromLastEntry(pool);
      balanceCheckDifferences.set(differing);
      balanceCheckTimestamp.set(Date.now() / 1000);
      if (differing > 0) {
        logger.warn({ differing, examples }, 'balances differ from their newest ledger entry: run the full recount, ledger:verify');
      }
      return differing;
    } catch (err) {
      logger.warn({ err }, 'balance check failed; tried again at the next interval');
      return 0;
    }
  };
  const check = () => (running = running.then(checkOnce));
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  void check();
  return {
    check,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
