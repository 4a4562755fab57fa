/**
 * A series the merchant starts (redelivery, recovery; docs/api.md#redelivery-and-recovery): transactions-svc sets the
 * delivery back to pending with series_start = the attempts made so far and trigger manual, and
 * publishes the event with x-attempt = series_start + 1. The series gets the whole schedule again
 * (6 attempts, the configured waits), numbered after the earlier attempts, each marked manual.
 */
import { deliveryOf, eventually, insertEvent, insertMerchant, RECORDED_MS, waitsBeforeRetries } from './support/fixtures';
import { useHarness } from './support/harness';

// CALLBACK_RETRY_DELAYS_MS=300,600,1200,2400,4800 (testConfig).
const DELAYS = [300, 600, 1200, 2400, 4800];
/** Another merchant's hanging callbacks in the automatic lane. */
const BACKLOG = 80;
const TOLERANCE_MS = 1000;

const h = useHarness('manual_series');

async function triggers(eventId: string) {
  const { rows } = await h.service.pool.query<{ attempt: number; trigger: string }>(
    'SELECT attempt, trigger::text FROM callback_attempts WHERE event_id = $1 ORDER BY attempt',
    [eventId],
  );
  return rows.map((r) => [r.attempt, r.trigger]);
}

describe('a manual series (redelivery)', () => {
  it('makes 6 more attempts numbered 7–12 with the full schedule, marked manual beside the automatic ones', async () => {
    const path = '/manual-always-500';
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}${path}` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    // The first series ended failed after its 6 attempts.
    for (let attempt = 1; attempt <= 6; attempt++) {
      await h.service.pool.query(
        `INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, duration_ms) VALUES ($1, $2, now(), 'http://x/cb', 500, 1)`,
        [event.id, attempt],
      );
    }
    await h.service.pool.query(
      `UPDATE callback_deliveries SET status = 'pending', attempt_count = 6, series_start = 6, trigger = 'manual' WHERE event_id = $1`,
      [event.id],
    );
    const previous = h.receiver.respond;
    h.receiver.respond = (r, i) => (r.path === path ? 500 : previous(r, i));
    await h.publisher.publishManual(event, { 'x-dw-merchant': merchant.id, 'x-attempt': 7 });

    const got = await h.receiver.waitFor(6, (r) => r.path === path, 20_000);
    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'failed', 15_000);
    got.slice(1).forEach((hit, i) => expect(hit.at - got[i]!.at).toBeLessThan(DELAYS[i]! + TOLERANCE_MS));
    const series = (await deliveryOf(h.service.pool, event.id)).attempts.slice(6);
    waitsBeforeRetries(series).forEach((ms, i) => expect(ms).toBeGreaterThanOrEqual(DELAYS[i]! - RECORDED_MS));
    expect(await triggers(event.id)).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((n) => [n, 'automatic']),
      ...[7, 8, 9, 10, 11, 12].map((n) => [n, 'manual']),
    ]);
    expect((await deliveryOf(h.service.pool, event.id)).attemptCount).toBe(12);
    // No 13th attempt.
    await new Promise((resolve) => setTimeout(resolve, DELAYS[4]! + TOLERANCE_MS));
    expect(h.receiver.received.filter((r) => r.path === path)).toHaveLength(6);
  }, 40_000);

  it('stops at the first 200 and records the delivery succeeded', async () => {
    const path = '/manual-ok';
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}${path}` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.service.pool.query(
      `UPDATE callback_deliveries SET status = 'pending', attempt_count = 0, series_start = 0, trigger = 'manual' WHERE event_id = $1`,
      [event.id],
    );
    await h.publisher.publishManual(event, { 'x-dw-merchant': merchant.id, 'x-attempt': 1 });
    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'succeeded');
    expect(await triggers(event.id)).toEqual([[1, 'manual']]);
  });
});

describe('the manual lane', () => {
  it('delivers a manual series, and its retry, while the automatic lane is full of another merchant’s backlog', async () => {
    const busyPath = '/automatic-hangs';
    const path = '/manual-lane';
    const busy = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}${busyPath}` });
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}${path}` });
    const previous = h.receiver.respond;
    let calls = 0;
    h.receiver.respond = (r, i) => (r.path === busyPath ? 'hang' : r.path === path ? (calls++ === 0 ? 503 : 200) : previous(r, i));
    // 80 callbacks that each hang until the 500 ms timeout: not slow enough to be judged slow
    // (CALLBACK_SLOW_AFTER_MS, 1 s), so they fill the automatic lane's prefetch (8) for 10 rounds,
    // 5 s: behind them would be seconds late, far past the bounds below, which leave a loaded CI
    // machine room (746 ms was seen for the first attempt when the backlog was 40, bound 400 ms).
    for (let i = 0; i < BACKLOG; i++) {
      const queued = await insertEvent(h.service.pool, busy.id, 'deposit');
      await h.publisher.publish(queued, { 'x-dw-merchant': busy.id });
    }
    await h.receiver.waitFor(8, (r) => r.path === busyPath, 5000);

    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.service.pool.query(`UPDATE callback_deliveries SET trigger = 'manual' WHERE event_id = $1`, [event.id]);
    const sentAt = Date.now();
    await h.publisher.publishManual(event, { 'x-dw-merchant': merchant.id, 'x-attempt': 1 });

    const got = await h.receiver.waitFor(2, (r) => r.path === path, 5000);
    // Not behind the 72 hanging messages still queued (about 4.5 s of the automatic lane's time) …
    expect(got[0]!.at - sentAt).toBeLessThan(1000);
    // … and its retry came back to the manual lane after its wait, not behind them either.
    expect(got[1]!.at - got[0]!.at).toBeLessThan(DELAYS[0]! + 1000);
    expect(h.receiver.received.filter((r) => r.path === busyPath).length).toBeLessThan(BACKLOG);
    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'succeeded');
    expect(waitsBeforeRetries((await deliveryOf(h.service.pool, event.id)).attempts)[0]).toBeGreaterThanOrEqual(DELAYS[0]! - RECORDED_MS);
    expect(await triggers(event.id)).toEqual([
      [1, 'manual'],
      [2, 'manual'],
    ]);
    h.receiver.respond = previous;
  }, 30_000);
});
