/**
 * The setup every delivery test file shares: its own database, AMQP prefix, running delivery
 * service, a publisher that sends like the outbox relay, and a real receiver — created in
 * beforeAll and torn down in afterAll. Fields are filled in once beforeAll has run.
 */
import type { CallbackConfig } from '@dw/config';
import { type CallbackReceiver, startCallbackReceiver, testPrefix } from '@dw/testing';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { startService, testConfig, TestPublisher, type RunningService } from './service';

export interface Harness {
  db: TestDatabase;
  config: CallbackConfig;
  service: RunningService;
  publisher: TestPublisher;
  receiver: CallbackReceiver;
}

export function useHarness(label: string, env: Record<string, string> = {}): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    h.db = await createTestDatabase(label.replace(/-/g, '_'));
    h.config = testConfig(testPrefix(`callback-svc.${label}`), h.db.url, env);
    h.service = await startService(h.config);
    h.publisher = await TestPublisher.open(h.config.amqpPrefix);
    h.receiver = await startCallbackReceiver();
  });
  afterAll(async () => {
    await h.service?.stop();
    await h.publisher?.closeAndDeleteTopology(h.config.retryDelaysMs);
    await h.receiver?.close();
    await h.db?.drop();
  });
  return h;
}
