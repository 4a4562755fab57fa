/** Builds the ui service; main.ts starts it, tests inject into it. */
import { BEHIND_GATEWAY_MAX_HEADER_BYTES, createService, type InternalAuth, type ListenerSettings } from '@dw/http-kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { loadAssets, type Assets } from './assets';
import { balanceRoutes } from './routes/balances';
import { endpointHealthRoutes } from './routes/endpoint-health';
import { pageRoutes } from './routes/pages';
import { viewTransactionRoutes } from './routes/view-transaction';
import type { TransactionsClient } from './transactions-client';

export interface UiDeps {
  logger: FastifyBaseLogger;
  transactions: TransactionsClient;
  /** Verifies that a request naming a merchant came through the gateway. */
  internalAuth: InternalAuth;
  assets?: Assets;
  /** METRICS_PORT and CLIENT_STALL_TIMEOUT_MS (defaults when omitted). */
  listener?: ListenerSettings;
}

export function buildApp({ logger, transactions, internalAuth, assets = loadAssets(), listener }: UiDeps): FastifyInstance {
  const app = createService({ ...listener, maxHeaderBytes: BEHIND_GATEWAY_MAX_HEADER_BYTES, logger, readiness: { 'transactions-svc': () => transactions.alive() } });
  app.addHook('onClose', async () => transactions.close());

  pageRoutes(app, assets);
  // Its own encapsulated scope, so the merchant hook applies to these alone.
  app.register(async (scope) => {
    viewTransactionRoutes(scope, transactions, assets, internalAuth);
    endpointHealthRoutes(scope, transactions, assets);
    balanceRoutes(scope, transactions, assets);
  });
  return app;
}
