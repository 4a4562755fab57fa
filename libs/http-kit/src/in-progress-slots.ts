/**
 * Work in progress at once, per key (a merchant, a client address) and in all, each slot released
 * once: the bound behind the transactions-svc's downloads and the gateway's token-less pages. What
 * waits for a turn instead of being refused (the gateway's per-merchant shares) keeps a queue of its
 * own. Counted in this process only: with several replicas each holds its own bounds.
 */
import type { ServerResponse } from 'node:http';

export interface InProgressLimits {
  /** Slots one key may hold at once. */
  perKey: number;
  /** Slots all keys together may hold at once. */
  total: number;
}

/** Why no slot was free: the key holds its share, or every slot is taken. */
export type SlotRefusal = 'key' | 'total';

export interface Slot {
  /** Frees the slot; calls after the first do nothing. */
  release: () => void;
}

export class InProgressSlots {
  private readonly byKey = new Map<string, number>();
  private taken = 0;

  /** `onChange` hears +1 on every slot taken and -1 on every slot freed (a gauge, say). */
  constructor(
    readonly limits: InProgressLimits,
    private readonly onChange: (delta: 1 | -1) => void = () => {},
  ) {}

  /** A slot, or why none is free. */
  acquire(key: string): Slot | { refused: SlotRefusal } {
    const mine = this.byKey.get(key) ?? 0;
    if (mine >= this.limits.perKey) return { refused: 'key' };
    if (this.taken >= this.limits.total) return { refused: 'total' };
    this.byKey.set(key, mine + 1);
    this.taken++;
    this.onChange(1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.byKey.get(key) ?? 1) - 1;
        if (left === 0) this.byKey.delete(key);
        else this.byKey.set(key, left);
        this.taken--;
        this.onChange(-1);
      },
    };
  }

  /** Slots held now, by `key` or (without one) in all. */
  inProgress(key?: string): number {
    return key === undefined ? this.taken : (this.byKey.get(key) ?? 0);
  }
}

/** Holds `slot` until `response` is over, whichever way: sent, failed, or the client cut off ('close'). */
export function releaseOnClose(slot: Slot, response: ServerResponse): void {
  response.once('close', slot.release);
}
