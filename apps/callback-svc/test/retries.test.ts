import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CallbackReceiver, type ReceivedCallback } from '@dw/testing';
import { deliveryOf, eventually, insertEvent, insertMerchant, RECORDED_MS, waitsBeforeRetries } from './support/fixtures';
import { useHarness } from './support/harness';

// CALLBACK_RETRY_DELAYS_MS=300,600,1200,2400,4800 and CALLBACK_TIMEOUT_MS=500 (testConfig).
const DELAYS = [300, 600, 1200, 2400, 4800];
const TIMEOUT_MS = 500;
// RabbitMQ expires a message at most a few ms late, plus one round trip through the service.
const TOLERANCE_MS = 1000; // the tolerance for the real schedule; the machine is shared and loaded in CI

const h = useHarness('retries');

beforeAll(() => {
  expect(h.config.retryDelaysMs).toEqual(DELAYS);
  expect(h.config.callbackTimeoutMs).toBe(TIMEOUT_MS);
});

/** A merchant whose deposit URL is a fresh path, an event for it, published; the path's requests. */
async function deliverTo(path: string, respond: (nth: number) => ReturnType<CallbackReceiver['respond']>) {
  const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}${path}` });
  const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
  const previous = h.receiver.respond;
  h.receiver.respond = (r, i) => (r.path === path ? respond(h.receiver.received.filter((x) => x.path === path).length) : previous(r, i));
  await h.publisher.publish(event);
  const hits = (n: number, timeoutMs?: number) => h.receiver.waitFor(n, (r: ReceivedCallback) => r.path === path, timeoutMs);
  return { event, hits };
}

const settled = (eventId: string, status: string, timeoutMs = 15_000) =>
  eventually(async () => (await deliveryOf(h.service.pool, eventId)).status === status, timeoutMs);

const waits = (hits: ReceivedCallback[]) => hits.slice(1).map((h, i) => h.at - hits[i]!.at);

describe('the retry schedule (docs/callbacks.md, rules 2–4)', () => {
  it('retries after 500, 500 and succeeds on the third attempt, waiting the configured delays', async () => {
    const { event, hits } = await deliverTo('/fail-twice', (nth) => (nth <= 2 ? 500 : 200));
    const got = await hits(3);
    await settled(event.id, 'succeeded');

    const measured = waits(got);
    expect(measured).toHaveLength(2);
    measured.forEach((ms, i) => expect(ms).toBeLessThan(DELAYS[i]! + TOLERANCE_MS));
    const delivery = await deliveryOf(h.service.pool, event.id);
    waitsBeforeRetries(delivery.attempts).forEach((ms, i) => expect(ms).toBeGreaterThanOrEqual(DELAYS[i]! - RECORDED_MS));
    expect(delivery.attemptCount).toBe(3);
    expect(delivery.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, null],
      [2, 500, null],
      [3, 200, null],
    ]);
    // The recorded times are those of the attempts themselves.
    for (const [i, a] of delivery.attempts.entries()) expect(Math.abs(a.at.getTime() - got[i]!.at)).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, DELAYS[2]! + TOLERANCE_MS));
    expect(h.receiver.received.filter((r) => r.path === '/fail-twice')).toHaveLength(3);
  });

  it('counts 201 as a failure: exactly 6 attempts, then the delivery is failed', async () => {
    const { event, hits } = await deliverTo('/always-201', () => 201);
    const got = await hits(6, 15_000);
    await settled(event.id, 'failed');

    waits(got).forEach((ms, i) => expect(ms).toBeLessThan(DELAYS[i]! + TOLERANCE_MS));
    const delivery = await deliveryOf(h.service.pool, event.id);
    expect(delivery.attemptCount).toBe(6);
    waitsBeforeRetries(delivery.attempts).forEach((ms, i) => expect(ms).toBeGreaterThanOrEqual(DELAYS[i]! - RECORDED_MS));
    expect(delivery.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, 201]));
    // No 7th attempt: wait longer than the last delay.
    await new Promise((resolve) => setTimeout(resolve, DELAYS[4]! + TOLERANCE_MS));
    expect(h.receiver.received.filter((r) => r.path === '/always-201')).toHaveLength(6);
  }, 30_000);

  it('counts a receiver that does not answer within CALLBACK_TIMEOUT_MS as a failure with no status and an error', async () => {
    const { event, hits } = await deliverTo('/hang-once', (nth) => (nth === 1 ? 'hang' : 200));
    await hits(2);
    await settled(event.id, 'succeeded');

    const [first, second] = (await deliveryOf(h.service.pool, event.id)).attempts;
    expect(first).toMatchObject({ attempt: 1, statusCode: null, error: expect.stringMatching(/timeout/) });
    expect(first!.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(first!.durationMs).toBeLessThan(TIMEOUT_MS + 1000);
    expect(second).toMatchObject({ attempt: 2, statusCode: 200, error: null });
  });

  it('counts a 200 whose body does not complete within CALLBACK_TIMEOUT_MS as a failure: the timeout bounds the whole reply', async () => {
    const { event, hits } = await deliverTo('/stall-once', (nth) => (nth === 1 ? 'stall-body' : 200));
    await hits(2);
    await settled(event.id, 'succeeded');

    const [first, second] = (await deliveryOf(h.service.pool, event.id)).attempts;
    expect(first).toMatchObject({ attempt: 1, statusCode: 200, error: expect.stringMatching(/timeout: the reply body did not complete/) });
    expect(first!.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(first!.durationMs).toBeLessThan(TIMEOUT_MS + 1000);
    expect(second).toMatchObject({ attempt: 2, statusCode: 200, error: null });
  });

  it('judges a reply by its status alone: a 200 with a 1 MB body succeeds (the body is not kept), a 500 with one fails', async () => {
    const ok = await deliverTo('/big-200', () => ({ status: 200, bodyBytes: 1024 * 1024 }));
    await ok.hits(1);
    await settled(ok.event.id, 'succeeded');
    expect((await deliveryOf(h.service.pool, ok.event.id)).attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);

    const bad = await deliverTo('/big-500', (nth) => (nth === 1 ? { status: 500, bodyBytes: 1024 * 1024 } : 200));
    await bad.hits(2);
    await settled(bad.event.id, 'succeeded');
    const [first] = (await deliveryOf(h.service.pool, bad.event.id)).attempts;
    expect(first).toMatchObject({ attempt: 1, statusCode: 500 });
  });

  it('counts a reset connection as a failure with no status and an error', async () => {
    const { event, hits } = await deliverTo('/reset-once', (nth) => (nth === 1 ? 'reset' : 200));
    await hits(2);
    await settled(event.id, 'succeeded');

    const [first] = (await deliveryOf(h.service.pool, event.id)).attempts;
    expect(first).toMatchObject({ attempt: 1, statusCode: null, error: expect.stringMatching(/\S/) });
    expect(first!.durationMs).toBeLessThan(TIMEOUT_MS);
  });

  it('counts a refused connection as a failure with no status and an error', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: 'http://127.0.0.1:9/closed-port' });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.publisher.publish(event);
    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).attempts.length >= 1);

    const [first] = (await deliveryOf(h.service.pool, event.id)).attempts;
    expect(first).toMatchObject({ attempt: 1, statusCode: null, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('does not follow a redirect: a 302 is a failed attempt and its Location is never requested', async () => {
    // A real server answering 302 with a Location that points at the recording h.receiver.
    let redirects = 0;
    const redirector = http.createServer((req, res) => {
      req.resume().on('end', () => {
        redirects += 1;
        res.writeHead(302, { location: `${h.receiver.url}/redirect-target` }).end();
      });
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = redirector.address() as AddressInfo;
      const merchant = await insertMerchant(h.service.pool, { deposit: `http://127.0.0.1:${port}/hook` });
      const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
      await h.publisher.publish(event);
      await eventually(async () => (await deliveryOf(h.service.pool, event.id)).attempts.length >= 2);

      const delivery = await deliveryOf(h.service.pool, event.id);
      expect(delivery.status).toBe('retrying');
      expect(delivery.attempts.slice(0, 2).map((a) => [a.attempt, a.statusCode])).toEqual([
        [1, 302],
        [2, 302],
      ]);
      expect(redirects).toBeGreaterThanOrEqual(2);
      expect(h.receiver.received.filter((r) => r.path === '/redirect-target')).toEqual([]);
    } finally {
      redirector.closeAllConnections();
      await new Promise((resolve) => redirector.close(resolve));
    }
  });
});
