/**
 * docs/callbacks.md: delivery is fair between merchants. A merchant whose endpoint hangs, is slow or
 * refuses uses only its own share of the delivery capacity and never delays another merchant's
 * callbacks. Scaled: a 2 s timeout, a slow endpoint answers after 1 s, a share of 4 in flight
 * (2 once slow), slow meaning attempts over 300 ms.
 */
import { MERCHANT_HEADER } from '@dw/messaging';
import type { Reaction } from '@dw/testing';
import { deliveryOf, eventually, insertEvent, insertMerchant, type TestEvent } from './support/fixtures';
import { useHarness } from './support/harness';

const SHARE = 4;
const h = useHarness('fairness', {
  CALLBACK_TIMEOUT_MS: '2000',
  CALLBACK_PREFETCH: '200',
  CALLBACK_MERCHANT_CONCURRENCY: String(SHARE),
  CALLBACK_SLOW_MERCHANT_CONCURRENCY: '2',
  CALLBACK_SLOW_AFTER_MS: '300',
  CALLBACK_RETRY_DELAYS_MS: '60000', // A's retries stay out of the test's way
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventsFor(merchantId: string, count: number): Promise<TestEvent[]> {
  const events: TestEvent[] = [];
  for (let i = 0; i < count; i++) events.push(await insertEvent(h.service.pool, merchantId, 'deposit'));
  return events;
}

describe.each<[string, Reaction]>([
  ['hangs', 'hang'],
  ['is slow (answers 200 after 1 s)', { status: 200, afterMs: 1000 }],
  ['answers 503 at once', 503],
  ['answers 429 at once', 429],
])('while merchant A’s endpoint %s', (label, reaction) => {
  it('B’s callbacks arrive at once, and A keeps to its share while its attempts go on', async () => {
    const tag = label.replace(/\W+/g, '-');
    const a = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/a-${tag}` });
    const b = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/b-${tag}` });
    const fromA = (r: { path: string }) => r.path === `/a-${tag}`;
    const fromB = (r: { path: string }) => r.path === `/b-${tag}`;
    h.receiver.respond = (r) => (fromA(r) ? reaction : 200);
    const aEvents = await eventsFor(a.id, 150);
    const bEvents = await eventsFor(b.id, 20);

    // A's burst first, then B's events one every 50 ms.
    await Promise.all(aEvents.map((e) => h.publisher.publish(e, { [MERCHANT_HEADER]: a.id })));
    const publishedAt = new Map<string, number>();
    for (const e of bEvents) {
      publishedAt.set(e.id, Date.now());
      await h.publisher.publish(e, { [MERCHANT_HEADER]: b.id });
      await sleep(50);
    }
    const got = await h.receiver.waitFor(20, fromB, 10_000);
    const delays = got.map((r) => r.at - publishedAt.get(r.json.id)!).sort((x, y) => x - y);
    expect(delays[delays.length - 1]).toBeLessThan(2000);

    if (reaction === 'hang') {
      // A hung request lasts exactly the 2 s timeout, so the requests that reached A within any
      // 1.9 s were all in flight at once: never more than A's share.
      const arrivals = h.receiver.received.filter(fromA).map((r) => r.at);
      const inFlight = arrivals.map((t) => arrivals.filter((u) => u <= t && u > t - 1900).length);
      expect(Math.max(...inFlight)).toBeLessThanOrEqual(SHARE);
    }
    // A is still served: its attempts go on, each recorded as attempt 1 of its event (waiting in a
    // throttle queue is not an attempt).
    await eventually(async () => h.receiver.received.filter(fromA).length > SHARE + 2, 15_000);
    const first = h.receiver.received.filter(fromA)[0]!;
    await eventually(async () => (await deliveryOf(h.service.pool, first.json.id)).attempts.length === 1, 5000);
    expect((await deliveryOf(h.service.pool, first.json.id)).attempts[0]!.attempt).toBe(1);
  }, 40_000);
});
