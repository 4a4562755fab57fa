import { randomUUID } from 'node:crypto';
import { InternalAuth } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app';
import { transactionsClient } from '../../src/transactions-client';
import { startFakeTransactionsSvc, type FakeTransactionsSvc } from './fake-transactions-svc';
import { INTERNAL_SECRET } from './fixtures';

export { INTERNAL_SECRET };
export const internalAuth = new InternalAuth([INTERNAL_SECRET]);

/**
 * The tests play the gateway: a request that names a merchant in x-merchant-id carries the
 * gateway's proof for exactly that request. `unsignedInject` sends what a direct caller would.
 */
function playGateway(app: FastifyInstance): FastifyInstance & { unsignedInject: FastifyInstance['inject'] } {
  const unsigned = app.inject.bind(app) as (opts: InjectOptions) => ReturnType<FastifyInstance['inject']>;
  const signed = (opts: InjectOptions) => {
    const headers = (opts.headers ?? {}) as Record<string, string | undefined>;
    const merchantId = headers['x-merchant-id'];
    if (typeof merchantId !== 'string') return unsigned(opts);
    const proof = internalAuth.headers({
      method: opts.method ?? 'GET',
      path: String(opts.url),
      merchantId,
      requestId: headers['x-request-id'] ?? randomUUID(),
    });
    return unsigned({ ...opts, headers: { ...proof, ...headers } as InjectOptions['headers'] });
  };
  return Object.assign(app, { inject: signed, unsignedInject: unsigned }) as never;
}

/** The ui service as main.ts builds it, pointed at `transactionsUrl`; `logLines` gets its log, a parsed line each. */
export async function startUi(transactionsUrl: string, upstreamTimeoutMs = 2000, logLines?: Record<string, unknown>[]) {
  const app = buildApp({
    logger: logLines
      ? createLogger('ui-test', 'info', { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) })
      : createLogger('ui-test', 'silent'),
    transactions: transactionsClient(transactionsUrl, upstreamTimeoutMs, internalAuth),
    internalAuth,
  });
  await app.ready();
  return playGateway(app);
}

export interface UiUnderTest {
  upstream: FakeTransactionsSvc;
  ui: Awaited<ReturnType<typeof startUi>>;
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
