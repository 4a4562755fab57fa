/**
 * One slot of the process's download bounds (domain/export-slots.ts) per streamed download: the
 * transactions export and the statement (the balance history as CSV) share them, so a merchant's
 * downloads of either kind together stay within EXPORT_CONCURRENCY_PER_MERCHANT, and all of them
 * within EXPORT_CONCURRENCY. Beyond them: 429 rate_limited with Retry-After.
 */
import { ApiError } from '@dw/http-kit';
import type { FastifyReply } from 'fastify';
import type { ExportSlots, SlotRefusal } from '../domain/export-slots';

/** A download usually takes seconds; a slot frees when one ends or is cut off. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 5;

const BUSY: Record<SlotRefusal, (perMerchant: number) => string> = {
  merchant: (perMerchant) =>
    `At most ${perMerchant} downloads of one merchant (transaction exports and statements together) stream at once; ` +
    `retry after ${DOWNLOAD_RETRY_AFTER_SECONDS} s, once one has finished.`,
  process: () => `Too many downloads are streaming now; retry after ${DOWNLOAD_RETRY_AFTER_SECONDS} s.`,
};

/** Takes a slot for this response, released once the response is over; throws the 429 when none is free. */
export function holdDownloadSlot(slots: ExportSlots, merchantId: string, reply: FastifyReply): void {
  const slot = slots.acquire(merchantId);
  if ('refused' in slot) {
    throw new ApiError(429, 'rate_limited', BUSY[slot.refused](slots.limits.perMerchant), undefined, {
      'retry-after': String(DOWNLOAD_RETRY_AFTER_SECONDS),
    });
  }
  // 'close' comes once the response is over, whichever way: sent, failed, or the client cut off.
  reply.raw.once('close', slot.release);
}
