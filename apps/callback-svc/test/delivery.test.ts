import { metricsRegistry } from '@dw/telemetry';
import { Webhook } from 'standardwebhooks';
import { deliveryOf, eventually, insertEvent, insertMerchant, setCallbackUrl } from './support/fixtures';
import { useHarness } from './support/harness';

// Nothing here tests the timeout (retries.test.ts does), so it is not the scaled 500 ms of the other
// files: the first attempt of a process just started on a loaded CI machine once took longer, failed,
// and the retry made two attempts where this file expects one.
const h = useHarness('delivery', { CALLBACK_TIMEOUT_MS: '5000' });

beforeEach(() => {
  h.receiver.respond = () => 200;
});

const forEvent = (id: string) => (r: { headers: Record<string, unknown> }) => r.headers['webhook-id'] === id;

describe('a delivered callback (docs/callbacks.md)', () => {
  it('POSTs the exact body, signed per Standard Webhooks with the merchant secret, webhook-id = event id', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/deposits?x=1` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit', 'completed');
    const before = Math.floor(Date.now() / 1000);
    await h.publisher.publish(event);

    const [got] = await h.receiver.waitFor(1, forEvent(event.id));
    expect(got!.path).toBe('/deposits?x=1');
    expect(got!.body).toBe(event.body);
    expect(got!.json).toEqual(event.event);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/callback-svc/);
    expect(got!.headers['webhook-id']).toBe(event.id);
    const timestamp = Number(got!.headers['webhook-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // An independent implementation verifies it; it throws on a bad signature or a stale timestamp.
    const verified = new Webhook(merchant.secret).verify(got!.body, got!.headers as Record<string, string>);
    expect(verified).toEqual(event.event);
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(got!.body, got!.headers as Record<string, string>)).toThrow();

    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'succeeded');
    const delivery = await deliveryOf(h.service.pool, event.id);
    // The attempts first (a failure shows its error), then the count.
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attempt: 1, url: `${h.receiver.url}/deposits?x=1`, statusCode: 200, error: null }),
    ]);
    expect(delivery.attemptCount).toBe(1);
    expect(delivery.attempts[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('sends deposit events to the deposit URL and withdraw events to the withdraw URL', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/d`, withdraw: `${h.receiver.url}/w` });
    const deposit = await insertEvent(h.service.pool, merchant.id, 'deposit');
    const withdraw = await insertEvent(h.service.pool, merchant.id, 'withdraw');
    await h.publisher.publish(withdraw);
    await h.publisher.publish(deposit);

    const [d] = await h.receiver.waitFor(1, forEvent(deposit.id));
    const [w] = await h.receiver.waitFor(1, forEvent(withdraw.id));
    expect(d!.path).toBe('/d');
    expect(d!.json.type).toBe('deposit.pending');
    expect(w!.path).toBe('/w');
    expect(w!.json.type).toBe('withdraw.pending');
  });

  it('marks the delivery skipped and sends nothing when the merchant has no URL for the event type', async () => {
    const merchant = await insertMerchant(h.service.pool, { withdraw: `${h.receiver.url}/w` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.publisher.publish(event);

    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'skipped');
    expect((await deliveryOf(h.service.pool, event.id)).attempts).toEqual([]);
    expect(h.receiver.received.filter(forEvent(event.id))).toEqual([]);
  });

  it('uses the URL as it is at each attempt: a URL changed after a failure receives the retry', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/old` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    h.receiver.respond = (r) => (r.path === '/old' ? 500 : 200);
    await h.publisher.publish(event);

    await h.receiver.waitFor(1, forEvent(event.id));
    await setCallbackUrl(h.service.pool, merchant.id, 'deposit', `${h.receiver.url}/new`);
    const hits = await h.receiver.waitFor(2, forEvent(event.id));
    expect(hits.map((h) => h.path)).toEqual(['/old', '/new']);
    // The same id and body, but a fresh timestamp and signature per attempt, each verifiable.
    expect(hits[1]!.body).toBe(hits[0]!.body);
    for (const h of hits) expect(() => new Webhook(merchant.secret).verify(h.body, h.headers as Record<string, string>)).not.toThrow();

    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'succeeded');
    const { attempts } = await deliveryOf(h.service.pool, event.id);
    expect(attempts.map((a) => [a.attempt, a.url, a.statusCode])).toEqual([
      [1, `${h.receiver.url}/old`, 500],
      [2, `${h.receiver.url}/new`, 200],
    ]);
  });

  it('signs with the secret as it is at the attempt (a rotated secret signs the next attempt)', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/rot` });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    const rotated = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    h.receiver.respond = () => (h.receiver.received.filter(forEvent(event.id)).length === 1 ? 500 : 200);
    await h.publisher.publish(event);
    await h.receiver.waitFor(1, forEvent(event.id));
    await h.service.pool.query('UPDATE merchants SET callback_signing_secret = $2 WHERE id = $1', [merchant.id, rotated]);

    const [first, second] = await h.receiver.waitFor(2, forEvent(event.id));
    expect(() => new Webhook(merchant.secret).verify(first!.body, first!.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated).verify(second!.body, second!.headers as Record<string, string>)).not.toThrow();
  });
});

describe('delivery metrics', () => {
  it('counts attempts by outcome and observes delivery latency in the /metrics registry', async () => {
    const text = await metricsRegistry.metrics();
    // The tests above made successful attempts and one 500 each in two of them.
    expect(text).toMatch(/^callback_attempts_total\{outcome="succeeded"\} [1-9]\d*$/m);
    expect(text).toMatch(/^callback_attempts_total\{outcome="http_status"\} [1-9]\d*$/m);
    expect(text).toMatch(/^callback_attempt_duration_seconds_count\{outcome="succeeded"\} [1-9]\d*$/m);
    expect(text).toMatch(/^callback_delivery_latency_seconds_count [1-9]\d*$/m);
    expect(text).toMatch(/^callback_deliveries_total\{status="skipped"\} 1$/m);
  });
});

describe('messages that can never be delivered', () => {
  it('acks an unparsable message and one for an unknown event without looping, and keeps delivering', async () => {
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/after` });
    await h.publisher.publish({ id: 'evt_garbage', type: 'deposit.pending', body: 'not json {' });
    await h.publisher.publish({ id: 'evt_00000000000000000000000000000000', type: 'deposit.pending', body: '{"id":"evt_00000000000000000000000000000000"}' });
    await h.publisher.publish({ id: 'evt_a', type: 'deposit.pending', body: '{"id":"evt_b"}' });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.publisher.publish(event);

    await h.receiver.waitFor(1, forEvent(event.id));
    await new Promise((resolve) => setTimeout(resolve, 1500)); // longer than the handed-back pause (1 s)
    // Each was handled exactly once: a message handed back would have been counted again.
    const invalid = await metricsRegistry.getSingleMetric('callback_invalid_messages_total')!.get();
    expect(Object.fromEntries(invalid.values.map((v) => [v.labels.reason, v.value]))).toEqual({ unparsable: 2, unknown_event: 1 });
    expect(h.receiver.received.filter((r) => r.path === '/after')).toHaveLength(1);
    // Stopped, the service hands back whatever it still holds: nothing is left to hand back.
    await h.service.stop();
    expect(await h.publisher.readyInDeliveryQueue()).toBe(0);
  });
});
