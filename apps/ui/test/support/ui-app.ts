import { createLogger } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app';
import { transactionsClient } from '../../src/transactions-client';
import { startFakeTransactionsSvc, type FakeTransactionsSvc } from './fake-transactions-svc';

/** The ui service as main.ts builds it, pointed at `transactionsUrl`. */
export async function startUi(transactionsUrl: string, upstreamTimeoutMs = 2000): Promise<FastifyInstance> {
  const app = buildApp({
    logger: createLogger('ui-test', 'silent'),
    transactions: transactionsClient(transactionsUrl, upstreamTimeoutMs),
  });
  await app.ready();
  return app;
}

export interface UiUnderTest {
  upstream: FakeTransactionsSvc;
  ui: FastifyInstance;
}

/** Registers beforeAll/afterAll giving a test file the ui in front of a stand-in transactions-svc. */
export function useUiWithUpstream(): UiUnderTest {
  const t = {} as UiUnderTest;
  beforeAll(async () => {
    t.upstream = await startFakeTransactionsSvc();
    t.ui = await startUi(t.upstream.url);
  });
  afterAll(async () => {
    await t.ui?.close();
    await t.upstream?.close();
  });
  return t;
}
