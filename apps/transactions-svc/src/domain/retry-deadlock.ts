/**
 * Balances are locked in key order by every statement that moves money, but two statements can
 * still meet in a circle through another lock: one that creates a balance's row (its foreign key
 * share-locks the merchant); or a status change, which locks its transaction and then its balance,
 * beside a create batch that holds that balance and replays the same transaction's orderId (its
 * ON CONFLICT check waits for the status change's new row version: ledger-properties.test.ts met
 * it under load). PostgreSQL then ends one of the two (40P01, deadlock detected), which changed
 * nothing, and it is run again, at once, up to three tries in all.
 */
import { isDeadlock, retryOn } from '@dw/db';

export function retryDeadlock<T>(run: () => Promise<T>): Promise<T> {
  return retryOn(run, { when: isDeadlock, tries: 3 });
}
