/**
 * The relay's doorbell, in process: every write that adds outbox rows rings it once its statement
 * has committed, and the relay (or relays, in a test) of this process wake at once. It replaces an
 * outbox NOTIFY trigger, which made PostgreSQL serialise every create's commit (docs/decisions.md).
 * Rows written by another replica are that replica's to publish; every relay's poll is the fallback
 * for a replica that died between commit and publish.
 */
import type { OutboxTable } from './relay-batch';

type Listener = (table: OutboxTable) => void;

const listeners = new Set<Listener>();

/** Called after a committed write that added rows to `table`. */
export function ringOutboxDoorbell(table: OutboxTable = 'outbox'): void {
  for (const listener of listeners) listener(table);
}

/** Subscribes; returns the unsubscribe function. */
export function onOutboxDoorbell(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
