import { createLogger } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app';
import { transactionsClient } from '../../src/transactions-client';

/** The ui service as main.ts builds it, pointed at `transactionsUrl`. */
export async function startUi(transactionsUrl: string, upstreamTimeoutMs = 2000): Promise<FastifyInstance> {
  const app = buildApp({
    logger: createLogger('ui-test', 'silent'),
    transactions: transactionsClient(transactionsUrl, upstreamTimeoutMs),
  });
  await app.ready();
  return app;
}
