/**
 * How many downloads (the CSV export of transactions, the statement) stream at once: a few per
 * merchant and a few per process. A download holds
 * a page of rows, a response and, between pages, a turn on the export pool; a merchant who opens
 * dozens (and never reads them) must get 429s, not the process's memory or the other merchants'
 * share. Counted in this process only: with several replicas each holds its own bounds.
 */
import { InProgressSlots } from '@dw/http-kit';
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

/** Slots keyed by merchant id; `refused: 'key'` is the merchant's share, `'total'` the process's. */
export function exportSlots(limits: ExportLimits): InProgressSlots {
  return new InProgressSlots({ perKey: limits.perMerchant, total: limits.perProcess }, (delta) => exportsInFlight.inc(delta));
}
