/**
 * A crash between sending a callback and acking its message, simulated in process: the receiver's
 * reply cuts the service's connections to RabbitMQ (and PostgreSQL) through TCP proxies, so the
 * unacked message goes back to the queue exactly as it would if the process died there. The
 * kill -9 of a real process is the e2e suite's part.
 */
import type { CallbackConfig } from '@dw/config';
import { metricsRegistry } from '@dw/telemetry';
import { type CallbackReceiver, startCallbackReceiver, startTcpProxy, type TcpProxy, testPrefix } from '@dw/testing';
import { createPool } from '@dw/db';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import type { Pool } from 'pg';
import { RECORD_RETRY_WITHIN_MS } from '../src/delivery/record-attempt';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { startService, testConfig, TestPublisher, type RunningService } from './support/service';

const OUTAGE_MS = 600;

let db: TestDatabase;
let config: CallbackConfig;
let service: RunningService;
let publisher: TestPublisher;
let receiver: CallbackReceiver;
let amqpProxy: TcpProxy;
let pgProxy: TcpProxy;
/** The test's own reads and writes, straight to PostgreSQL: the outages are the service's. */
let direct: Pool;

beforeAll(async () => {
  db = await createTestDatabase('at_least_once');
  direct = createPool(db.url, 2);
  amqpProxy = await startTcpProxy('127.0.0.1', 5672);
  pgProxy = await startTcpProxy('127.0.0.1', 5432);
  const prefix = testPrefix('callback-svc.at-least-once');
  config = testConfig(prefix, db.url.replace('127.0.0.1:5432', pgProxy.address), { AMQP_URL: `amqp://guest:guest@${amqpProxy.address}` });
  service = await startService(config);
  publisher = await TestPublisher.open(prefix);
  receiver = await startCallbackReceiver();
});

afterAll(async () => {
  await service?.stop();
  await publisher?.closeAndDeleteTopology(config.retryDelaysMs);
  await receiver?.close();
  await amqpProxy?.close();
  await pgProxy?.close();
  await direct?.end();
  await db?.drop();
});

/** Cuts the given proxy now and restores it after `ms`. */
function outage(proxy: TcpProxy, ms = OUTAGE_MS): void {
  proxy.cut();
  setTimeout(() => proxy.restore(), ms);
}

async function scenario(path: string, onFirst: (nth: number) => number) {
  const merchant = await insertMerchant(direct, { deposit: `${receiver.url}${path}` });
  const event = await insertEvent(direct, merchant.id, 'deposit');
  receiver.respond = (r) => (r.path === path ? onFirst(receiver.received.filter((x) => x.path === path).length) : 200);
  await publisher.publish(event);
  return event;
}

describe('at-least-once delivery across a crash before the ack', () => {
  it('records the attempt once PostgreSQL is back when it was gone for a moment after the send: the callback is not sent again', async () => {
    const event = await scenario('/db-blip-before-record', (nth) => {
      if (nth === 1) outage(pgProxy);
      return 200;
    });
    await receiver.waitFor(1, (r) => r.path === '/db-blip-before-record');
    await eventually(async () => (await deliveryOf(direct, event.id)).status === 'succeeded', 10_000);
    expect((await deliveryOf(direct, event.id)).attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
    // Handed back instead, the message would have found attempt 1 claimed and sent it again once
    // the claim lapsed (CALLBACK_TIMEOUT_MS + 5 s).
    await new Promise((resolve) => setTimeout(resolve, 500 + 5_000 + 1_000));
    expect(receiver.received.filter((r) => r.path === '/db-blip-before-record')).toHaveLength(1);
  }, 30_000);

  it('sends the callback again when the outcome could not be recorded (broker gone, database gone longer than the record is retried), once the claim has lapsed', async () => {
    const event = await scenario('/lost-before-record', (nth) => {
      if (nth === 1) {
        outage(amqpProxy);
        outage(pgProxy, RECORD_RETRY_WITHIN_MS + 1_000);
      }
      return 200;
    });
    // The redelivered copy finds attempt 1 claimed; it waits in a throttle queue until the claim
    // (timeout + 5 s) lapses, then takes the attempt over.
    const hits = await receiver.waitFor(2, (r) => r.path === '/lost-before-record', 30_000);
    expect(hits.map((h) => h.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(hits[1]!.body).toBe(hits[0]!.body);

    await eventually(async () => (await deliveryOf(direct, event.id)).status === 'succeeded', 15_000);
    expect((await deliveryOf(direct, event.id)).attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
  }, 50_000);

  it('publishes the retry again, without repeating the attempt, when the retry could not be published (broker gone after the send)', async () => {
    const event = await scenario('/lost-before-retry', (nth) => {
      if (nth === 1) outage(amqpProxy);
      return nth === 1 ? 500 : 200;
    });
    await receiver.waitFor(2, (r) => r.path === '/lost-before-retry', 15_000);

    await eventually(async () => (await deliveryOf(direct, event.id)).status === 'succeeded', 15_000);
    // Attempt 1 was recorded before the outage hit its retry; the redelivered copy finds it made and
    // publishes the retry instead of sending attempt 1 again: one chain, attempt 2 succeeds.
    expect((await deliveryOf(direct, event.id)).attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  });

  it('drops a redelivered duplicate whose success was already recorded (only the ack was lost)', async () => {
    const duplicates = async () => (await metricsRegistry.getSingleMetric('callback_duplicate_messages_total')!.get()).values[0]?.value ?? 0;
    const before = await duplicates();
    const event = await scenario('/lost-ack', (nth) => {
      if (nth === 1) outage(amqpProxy);
      return 200;
    });
    await receiver.waitFor(1, (r) => r.path === '/lost-ack');
    await eventually(async () => (await deliveryOf(direct, event.id)).status === 'succeeded');
    // Wait for the reconnect and the redelivery of the unacked message, which is then dropped.
    await service.amqp.whenConnected();
    await eventually(async () => (await publisher.readyInDeliveryQueue()) === 0);
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await eventually(async () => (await duplicates()) === before + 1);
    expect(receiver.received.filter((r) => r.path === '/lost-ack')).toHaveLength(1);
    expect((await deliveryOf(direct, event.id)).attempts).toHaveLength(1);
  });
});
