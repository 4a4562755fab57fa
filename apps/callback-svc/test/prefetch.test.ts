import type { CallbackConfig } from '@dw/config';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { createTestDatabase, type TestDatabase } from './support/database';
import { insertEvent, insertMerchant } from './support/fixtures';
import { startService, testConfig, testPrefix, TestPublisher, type RunningService } from './support/service';

const PREFETCH = 3;
const TIMEOUT_MS = 3000;

let db: TestDatabase;
let config: CallbackConfig;
let service: RunningService;
let publisher: TestPublisher;
let receiver: CallbackReceiver;

beforeAll(async () => {
  db = await createTestDatabase('prefetch');
  config = testConfig(testPrefix('prefetch'), db.url, { CALLBACK_PREFETCH: String(PREFETCH), CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS) });
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

describe('CALLBACK_PREFETCH bounds the deliveries in flight', () => {
  it('sends exactly PREFETCH requests at once to a receiver that hangs, and the next ones only as those end', async () => {
    receiver.respond = () => 'hang';
    const merchant = await insertMerchant(service.pool, { deposit: `${receiver.url}/hang` });
    const started = Date.now();
    for (let i = 0; i < 10; i++) await publisher.publish(await insertEvent(service.pool, merchant.id, 'deposit'));

    await receiver.waitFor(PREFETCH);
    // Well inside the timeout nothing else arrives: PREFETCH requests are hanging, no more are sent.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 2));
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(receiver.received).toHaveLength(PREFETCH);
    // Once those time out, the next PREFETCH go out together.
    const next = await receiver.waitFor(2 * PREFETCH, undefined, 3 * TIMEOUT_MS);
    expect(next[PREFETCH]!.at - next[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  });
});
