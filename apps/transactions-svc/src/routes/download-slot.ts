/**
 * One slot of the process's download bounds (domain/export-slots.ts, an InProgressSlots of libs/http-kit) per streamed download: the
 * transactions export and the statement (the balance history as CSV) share them, so a merchant's
 * downloads of either kind together stay within EXPORT_CONCURRENCY_PER_MERCHANT, and all of them
 * within EXPORT_CONCURRENCY. Beyond them: 429 rate_limited with Retry-After.
 */
import { ApiError, releaseOnClose, type InProgressSlots, type SlotRefusal } from '@dw/http-kit';
import type { FastifyReply } from 'fastify';

/** A download usually takes seconds; a slot frees when one ends or is cut off. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 5;

const BUSY: Record<SlotRefusal, (perMerchant: number) => string> = {
  key: (perMerchant) =>
    `At most ${perMerchant} downloads of one merchant (transaction exports and statements together) stream at once; ` +
    `retry after ${DOWNLOAD_RETRY_AFTER_SECONDS} s, once one has finished.`,
  total: () => `Too many downloads are streaming now; retry after ${DOWNLOAD_RETRY_AFTER_SECONDS} s.`,
};

/** Takes a slot for this response, released once the response is over; throws the 429 when none is free. */
export function holdDownloadSlot(slots: InProgressSlots, merchantId: string, reply: FastifyReply): void {
  const slot = slots.acquire(merchantId);
  if ('refused' in slot) {
    throw new ApiError(429, 'rate_limited', BUSY[slot.refused](slots.limits.perKey), undefined, {
      'retry-after': String(DOWNLOAD_RETRY_AFTER_SECONDS),
    });
  }
  releaseOnClose(slot, reply.raw);
}
