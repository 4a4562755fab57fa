/**
 * One attempt chain per event: two copies of one message (a lost ack, an outbox row published
 * twice) never send an attempt twice nor rewrite a settled delivery. Each attempt is claimed in
 * the database before it is sent; the second claimant sends nothing.
 */
import { MERCHANT_HEADER } from '@dw/messaging';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness('one-chain', { CALLBACK_RETRY_DELAYS_MS: '200,200,200,200,200' });

describe('two copies of one event', () => {
  it('make one chain: six POSTs to an endpoint that always fails, attempts 1 to 6 once each, then failed', async () => {
    const m = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/two-copies` });
    const event = await insertEvent(h.service.pool, m.id, 'deposit');
    h.receiver.respond = (r) => (r.path === '/two-copies' ? 500 : 200);
    await Promise.all([h.publisher.publish(event, { [MERCHANT_HEADER]: m.id }), h.publisher.publish(event, { [MERCHANT_HEADER]: m.id })]);

    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'failed', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // room for a second chain to show itself
    const delivery = await deliveryOf(h.service.pool, event.id);
    expect(delivery.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(h.receiver.received.filter((r) => r.path === '/two-copies')).toHaveLength(6);
    expect(delivery.status).toBe('failed');
  }, 45_000);

  it('never turn a succeeded delivery back: a late copy of attempt 1 is dropped unsent', async () => {
    const m = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/late-copy` });
    const event = await insertEvent(h.service.pool, m.id, 'deposit');
    await h.publisher.publish(event, { [MERCHANT_HEADER]: m.id });
    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).status === 'succeeded');
    await h.publisher.publish(event, { [MERCHANT_HEADER]: m.id });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(h.receiver.received.filter((r) => r.path === '/late-copy')).toHaveLength(1);
    expect((await deliveryOf(h.service.pool, event.id)).status).toBe('succeeded');
  });
});
