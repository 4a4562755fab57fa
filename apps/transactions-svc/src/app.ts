/** Builds the transactions-svc Fastify instance; main.ts starts it, tests inject into it. */
import type { TransactionsConfig } from '@dw/config';
import { createService, InternalAuth, requireInternalCaller, requireMerchant } from '@dw/http-kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type pg from 'pg';
import { mapDatabaseError } from './db-errors';
import { startSandboxSettler, type Settler } from './domain/sandbox-settler';
import { balanceRoutes } from './routes/balances';
import { callbackUrlRoutes } from './routes/callback-urls';
import { createTransactionRoutes } from './routes/create-transaction';
import { endpointHealthRoutes } from './routes/endpoint-health';
import { exportTransactionRoutes } from './routes/export-transactions';
import { internalAuthRoutes } from './routes/internal-auth';
import { redeliverCallbackRoutes } from './routes/redeliver-callbacks';
import { rotateCallbackSecretRoutes } from './routes/rotate-callback-secret';

import { operatorRoutes } from './routes/operator-status';
import { viewTransactionRoutes } from './routes/view-transactions';

export interface AppDeps {
  config: Pick<TransactionsConfig, 'adminToken' | 'sandboxSettleMs' | 'allowPrivateHosts' | 'internalAuthSecrets'>;
  /** Every query runs on this pool (src/db/sql.ts says why not through the Prisma client). */
  db: pg.Pool;
  logger: FastifyBaseLogger;
}

export function buildApp({ config, db, logger }: AppDeps): FastifyInstance {
  const app = createService({
    logger,
    readiness: { postgresql: () => db.query('SELECT 1') },
    mapError: mapDatabaseError,
  });

  // Only the gateway (and the ui, acting for the merchant the gateway authenticated) speaks for a
  // merchant or resolves tokens; the operator API has its own admin token.
  const internalAuth = new InternalAuth(config.internalAuthSecrets);
  app.register(async (merchantApi) => {
    requireMerchant(merchantApi, internalAuth);
    createTransactionRoutes(merchantApi, db);
    callbackUrlRoutes(merchantApi, db, config.allowPrivateHosts);
    viewTransactionRoutes(merchantApi, db);
    endpointHealthRoutes(merchantApi, db);
    exportTransactionRoutes(merchantApi, db);
    rotateCallbackSecretRoutes(merchantApi, db);
    redeliverCallbackRoutes(merchantApi, db);
    balanceRoutes(merchantApi, db);
  });
  operatorRoutes(app, db, config.adminToken);
  app.register(async (gatewayOnly) => {
    requireInternalCaller(gatewayOnly, internalAuth);
    internalAuthRoutes(gatewayOnly, db);
  });

  let settler: Settler | undefined;
  if (config.sandboxSettleMs > 0) {
    app.addHook('onReady', async () => {
      settler = startSandboxSettler(db, config.sandboxSettleMs, app.log);
    });
  }
  app.addHook('onClose', async () => {
    await settler?.stop();
  });
  return app;
}
