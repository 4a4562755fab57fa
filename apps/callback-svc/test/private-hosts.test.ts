import type { CallbackConfig } from '@dw/config';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { createTestDatabase, type TestDatabase } from './support/database';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { startService, testConfig, testPrefix, TestPublisher, type RunningService } from './support/service';

// CALLBACK_ALLOW_PRIVATE_HOSTS=false: the production default.
let db: TestDatabase;
let config: CallbackConfig;
let service: RunningService;
let publisher: TestPublisher;
let receiver: CallbackReceiver;

beforeAll(async () => {
  db = await createTestDatabase('private_hosts');
  config = testConfig(testPrefix('private-hosts'), db.url, { CALLBACK_ALLOW_PRIVATE_HOSTS: 'false' });
  service = await startService(config);
  publisher = await TestPublisher.open(config.amqpPrefix);
  receiver = await startCallbackReceiver();
});

afterAll(async () => {
  await service?.stop();
  await publisher?.closeAndDeleteTopology(config.retryDelaysMs);
  await receiver?.close();
  await db?.drop();
});

describe('the private-host guard at send time', () => {
  // The URL was accepted when saved (or DNS changed since): the sender checks again on every attempt.
  it.each([
    ['an IP literal (127.0.0.1)', (port: string) => `http://127.0.0.1:${port}/literal`],
    ['a host name that resolves to loopback (localhost)', (port: string) => `http://localhost:${port}/named`],
  ])('refuses %s: a failed attempt with an error, and no request reaches it', async (_label, urlFor) => {
    const url = urlFor(new URL(receiver.url).port);
    const merchant = await insertMerchant(service.pool, { deposit: url });
    const event = await insertEvent(service.pool, merchant.id, 'deposit');
    await publisher.publish(event);

    await eventually(async () => (await deliveryOf(service.pool, event.id)).attempts.length >= 2);
    const delivery = await deliveryOf(service.pool, event.id);
    expect(delivery.status).toBe('retrying');
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ url, statusCode: null, error: expect.stringMatching(/not a public address/) });
    }
    expect(receiver.received).toEqual([]);
  });
});
