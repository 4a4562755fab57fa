/**
 * Trace context on the callback request, with OpenTelemetry running as in production (the preload
 * starts it there): the undici instrumentation adds the traceparent of its client span, a child of
 * the message's trace, and the sender must not add a second one.
 */
import { startTelemetry, shutdownTelemetry } from '@dw/telemetry';
import type { CallbackConfig } from '@dw/config';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { createTestDatabase, type TestDatabase } from './support/database';
import { insertEvent, insertMerchant } from './support/fixtures';
import { startService, testConfig, testPrefix, TestPublisher, type RunningService } from './support/service';

startTelemetry('callback-svc-trace-test');

let db: TestDatabase;
let config: CallbackConfig;
let service: RunningService;
let publisher: TestPublisher;
let receiver: CallbackReceiver;

beforeAll(async () => {
  db = await createTestDatabase('trace');
  config = testConfig(testPrefix('trace'), db.url);
  service = await startService(config);
  publisher = await TestPublisher.open(config.amqpPrefix);
  receiver = await startCallbackReceiver();
});

afterAll(async () => {
  await service?.stop();
  await publisher?.closeAndDeleteTopology(config.retryDelaysMs);
  await receiver?.close();
  await db?.drop();
  await shutdownTelemetry();
});

describe('traceparent on callbacks', () => {
  it('sends exactly one W3C traceparent, in the trace of the message, from a new span', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const merchant = await insertMerchant(service.pool, { deposit: `${receiver.url}/traced` });
    const event = await insertEvent(service.pool, merchant.id, 'deposit');
    await publisher.publish(event, { traceparent: `00-${traceId}-${parentSpanId}-01` });

    const [got] = await receiver.waitFor(1, (r) => r.path === '/traced');
    // Two headers would arrive joined as "a, b"; one matches the bare format.
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(got!.headers.traceparent));
    expect(match).not.toBeNull();
    expect(match![1]).toBe(traceId);
    expect(match![2]).not.toBe(parentSpanId);
  });

  it('keeps the trace on retries: every attempt carries the message trace id', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const merchant = await insertMerchant(service.pool, { deposit: `${receiver.url}/traced-retry` });
    const event = await insertEvent(service.pool, merchant.id, 'deposit');
    receiver.respond = (r) => (receiver.received.filter((x) => x.path === r.path).length === 1 ? 503 : 200);
    await publisher.publish(event, { traceparent: `00-${traceId}-b7ad6b7169203331-01` });

    const hits = await receiver.waitFor(2, (r) => r.path === '/traced-retry');
    for (const h of hits) expect(String(h.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(hits[0]!.headers.traceparent).not.toBe(hits[1]!.headers.traceparent);
  });
});
