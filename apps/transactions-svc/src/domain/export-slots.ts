/**
 * How many downloads (the CSV export of transactions, the statement) stream at once: a few per
 * merchant and a few per process. A download holds
 * a page of rows, a response and, between pages, a turn on the export pool; a merchant who opens
 * dozens (and never reads them) must get 429s, not the process's memory or the other merchants'
 * share. Counted in this process only: with several replicas each holds its own bounds.
 */
import { metricsRegistry } from '@dw/telemetry';
import { Gauge } from 'prom-client';

export const exportsInFlight = new Gauge({
  name: 'dw_exports_in_flight',
  help: 'Downloads (transaction CSVs and statements) streaming from this process now.',
  registers: [metricsRegistry],
});

export interface ExportLimits {
  /** EXPORT_CONCURRENCY_PER_MERCHANT */
  perMerchant: number;
  /** EXPORT_CONCURRENCY */
  perProcess: number;
}

export const DEFAULT_EXPORT_LIMITS: ExportLimits = { perMerchant: 2, perProcess: 8 };

export type SlotRefusal = 'merchant' | 'process';

export class ExportSlots {
  private readonly byMerchant = new Map<string, number>();
  private total = 0;

  constructor(readonly limits: ExportLimits) {}

  /** A release function (call it once, when the response is over), or why no slot is free. */
  acquire(merchantId: string): { release: () => void } | { refused: SlotRefusal } {
    const mine = this.byMerchant.get(merchantId) ?? 0;
    if (mine >= this.limits.perMerchant) return { refused: 'merchant' };
    if (this.total >= this.limits.perProcess) return { refused: 'process' };
    this.byMerchant.set(merchantId, mine + 1);
    this.total++;
    exportsInFlight.inc();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.byMerchant.get(merchantId) ?? 1) - 1;
        if (left === 0) this.byMerchant.delete(merchantId);
        else this.byMerchant.set(merchantId, left);
        this.total--;
        exportsInFlight.dec();
      },
    };
  }
}
