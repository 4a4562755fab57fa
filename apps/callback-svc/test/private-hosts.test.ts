import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { useHarness } from './support/harness';

// CALLBACK_ALLOW_PRIVATE_HOSTS=false: the production default.

const h = useHarness('private-hosts', { CALLBACK_ALLOW_PRIVATE_HOSTS: 'false' });

describe('the private-host guard at send time', () => {
  // The URL was accepted when saved (or DNS changed since): the sender checks again on every attempt.
  it.each([
    ['an IP literal (127.0.0.1)', (port: string) => `http://127.0.0.1:${port}/literal`],
    ['a host name that resolves to loopback (localhost)', (port: string) => `http://localhost:${port}/named`],
  ])('refuses %s: a failed attempt with an error, and no request reaches it', async (_label, urlFor) => {
    const url = urlFor(new URL(h.receiver.url).port);
    const merchant = await insertMerchant(h.service.pool, { deposit: url });
    const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
    await h.publisher.publish(event);

    await eventually(async () => (await deliveryOf(h.service.pool, event.id)).attempts.length >= 2);
    const delivery = await deliveryOf(h.service.pool, event.id);
    expect(delivery.status).toBe('retrying');
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ url, statusCode: null, error: expect.stringMatching(/not a public address/) });
    }
    expect(h.receiver.received).toEqual([]);
  });
});
