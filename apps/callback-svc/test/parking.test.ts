/**
 * Nothing is lost past RabbitMQ's delivery limit (issue 8 §4): with an explicit, low
 * x-delivery-limit, a message handed back again and again (PostgreSQL is away, so every attempt to
 * claim it fails) is parked in callbacks.parked instead of dropped; once the database is back, the
 * sweeper finds its delivery unseen for too long and publishes it again, and it is delivered once.
 */
import { MERCHANT_HEADER, messagingNames } from '@dw/messaging';
import { type CallbackReceiver, startCallbackReceiver, startTcpProxy, type TcpProxy, testPrefix } from '@dw/testing';
import type { CallbackConfig } from '@dw/config';
import { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { startService, testConfig, TestPublisher, type RunningService } from './support/service';

let db: TestDatabase;
let direct: Pool;
let pgProxy: TcpProxy;
let config: CallbackConfig;
let service: RunningService;
let publisher: TestPublisher;
let receiver: CallbackReceiver;

beforeAll(async () => {
  db = await createTestDatabase('parking');
  direct = new Pool({ connectionString: db.url, max: 2 });
  pgProxy = await startTcpProxy('127.0.0.1', 5432);
  config = testConfig(testPrefix('callback-svc.parking'), db.url.replace('127.0.0.1:5432', pgProxy.address), {
    CALLBACK_DELIVERY_LIMIT: '2',
    CALLBACK_SWEEP_INTERVAL_MS: '300',
    CALLBACK_SWEEP_AFTER_MS: '2000',
  });
  service = await startService(config);
  publisher = await TestPublisher.open(config.amqpPrefix);
  receiver = await startCallbackReceiver();
});

afterAll(async () => {
  await service?.stop();
  await publisher?.closeAndDeleteTopology(config.retryDelaysMs);
  await receiver?.close();
  await pgProxy?.close();
  await direct?.end();
  await db?.drop();
});

describe('a message handed back past the delivery limit', () => {
  it('is parked, not dropped, and the sweeper delivers it once PostgreSQL is back', async () => {
    const m = await insertMerchant(direct, { deposit: `${receiver.url}/parked` });
    const event = await insertEvent(direct, m.id, 'deposit');
    pgProxy.cut();
    await publisher.publish(event, { [MERCHANT_HEADER]: m.id });

    const parked = messagingNames(config.amqpPrefix).parkedQueue;
    await eventually(async () => (await publisher.depth(parked)) === 1, 20_000, 200);
    expect(await publisher.depth(messagingNames(config.amqpPrefix).deliverQueue)).toBe(0);
    expect(receiver.received).toHaveLength(0);

    pgProxy.restore();
    const [hit] = await receiver.waitFor(1, (r) => r.path === '/parked', 20_000);
    expect(hit!.headers['webhook-id']).toBe(event.id);
    // Serialised from the stored event, as the outbox relay does (jsonb orders metadata keys its own way).
    expect(hit!.json).toEqual(event.event);
    await eventually(async () => (await deliveryOf(direct, event.id)).status === 'succeeded');
    expect((await deliveryOf(direct, event.id)).attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
    await new Promise((resolve) => setTimeout(resolve, 2500)); // another sweep or two: nothing more is sent
    expect(receiver.received.filter((r) => r.path === '/parked')).toHaveLength(1);
  }, 60_000);
});
