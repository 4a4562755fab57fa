/**
 * docs/callbacks.md, "The retry waits stay exact": a merchant whose endpoint hangs (a server down
 * behind a firewall, say) still gets every retry after exactly its timeout plus its wait, for as
 * many callbacks at once as the slow share holds (CALLBACK_SLOW_MERCHANT_CONCURRENCY, default 16).
 * With the former share of 4, six deposits' worth of callbacks to a hanging endpoint had their
 * retries pushed back by a whole timeout, each waiting for a slot.
 * Scaled: a 2 s timeout, waits of 1 and 2 s, slow meaning an attempt in flight over 300 ms.
 */
import { MERCHANT_HEADER } from '@dw/messaging';
import type { ReceivedCallback } from '@dw/testing';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { useHarness } from './support/harness';

const TIMEOUT_MS = 2000;
const DELAYS = [1000, 2000];
// RabbitMQ expires a message a few ms late, plus a round trip through the service; the machine is shared.
const TOLERANCE_MS = 700;
const CALLBACKS = 12; // six deposits' worth: each deposit is called back when pending and when settled

const h = useHarness('hanging-schedule', {
  CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS),
  CALLBACK_RETRY_DELAYS_MS: DELAYS.join(','),
  CALLBACK_SLOW_AFTER_MS: '300',
  CALLBACK_PREFETCH: '1000', // the default (the other tests' 8 would cap slow merchants at 4 messages)
});

it(`a hanging endpoint with ${CALLBACKS} callbacks at once gets each retry after the timeout plus exactly its wait`, async () => {
  expect(h.config.slowMerchantConcurrency).toBeGreaterThanOrEqual(CALLBACKS); // the default under test
  const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/hangs` });
  h.receiver.respond = () => 'hang';
  const events = [];
  for (let i = 0; i < CALLBACKS; i++) events.push(await insertEvent(h.service.pool, merchant.id, 'deposit'));
  await Promise.all(events.map((e) => h.publisher.publish(e, { [MERCHANT_HEADER]: merchant.id })));

  await h.receiver.waitFor(CALLBACKS * 3, (r) => r.path === '/hangs', 30_000);
  const byEvent = new Map<string, ReceivedCallback[]>();
  for (const r of h.receiver.received) byEvent.set(r.json.id, [...(byEvent.get(r.json.id) ?? []), r]);

  const first = Math.min(...h.receiver.received.map((r) => r.at));
  for (const e of events) {
    const hits = byEvent.get(e.id)!;
    expect(hits).toHaveLength(3);
    expect(hits[0]!.at - first).toBeLessThan(TOLERANCE_MS); // no first attempt waits for another's timeout
    for (const [i, delay] of DELAYS.entries()) {
      // As the receiver saw them: never pushed back beyond the timeout and the wait.
      expect(hits[i + 1]!.at - hits[i]!.at).toBeLessThan(TIMEOUT_MS + delay + TOLERANCE_MS);
    }
  }
  // Three attempts, each a timeout; then the delivery is failed.
  for (const e of events) {
    await eventually(async () => (await deliveryOf(h.service.pool, e.id)).status === 'failed', 10_000);
    const { attempts } = await deliveryOf(h.service.pool, e.id);
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, null], [2, null], [3, null]]);
    expect(attempts.every((a) => /timeout/.test(a.error ?? ''))).toBe(true);
    // Never early, by the service's own clock: each attempt's recorded start (taken before its timeout
    // starts) is at least the timeout plus the wait after the one before (to the millisecond the
    // column keeps). Measured at the receiver instead, this gap also holds the receiver's own lag in
    // reading the first request, which on a loaded machine made it read up to 60 ms short.
    for (const [i, delay] of DELAYS.entries()) {
      expect(attempts[i + 1]!.at.getTime() - attempts[i]!.at.getTime()).toBeGreaterThanOrEqual(TIMEOUT_MS + delay - 2);
    }
  }
}, 60_000);
