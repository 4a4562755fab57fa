/** Builds the transactions-svc Fastify instance; main.ts starts it, tests inject into it. */
import type { TransactionsConfig } from '@dw/config';
import { BEHIND_GATEWAY_MAX_HEADER_BYTES, createService, InternalAuth, requireInternalCaller, requireMerchant, type ListenerSettings } from '@dw/http-kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type pg from 'pg';
import { mapDatabaseError } from './db-errors';
import { startSandboxSettler, type Settler } from './domain/sandbox-settler';
import { DEFAULT_EXPORT_LIMITS, exportSlots, type ExportLimits } from './domain/export-slots';
import { balanceRoutes } from './routes/balances';
import { callbackUrlRoutes } from './routes/callback-urls';
import { createTransactionRoutes } from './routes/create-transaction';
import { endpointHealthRoutes } from './routes/endpoint-health';
import { DEFAULT_EXPORT_PAGE_BYTES, exportTransactionRoutes } from './routes/export-transactions';
import { internalAuthRoutes } from './routes/internal-auth';
import { redeliverCallbackRoutes } from './routes/redeliver-callbacks';
import { rotateCallbackSecretRoutes } from './routes/rotate-callback-secret';

import { operatorRoutes } from './routes/operator-status';
import { viewTransactionRoutes } from './routes/view-transactions';

export interface AppDeps {
  config: Pick<TransactionsConfig, 'adminToken' | 'sandboxSettleMs' | 'allowPrivateHosts' | 'internalAuthSecrets'> &
    Partial<Pick<TransactionsConfig, 'redeliveryMaxSeries'>>;
  /** Every query runs on this pool (libs/db/src/sql.ts says why not through the Prisma client). */
  db: pg.Pool;
  logger: FastifyBaseLogger;
  /** METRICS_PORT and CLIENT_STALL_TIMEOUT_MS (defaults when omitted). */
  listener?: ListenerSettings;
  /** The downloads' pool and bounds (main.ts: its own pool and the EXPORT_* settings); `db` and the defaults when omitted. */
  exports?: { db?: pg.Pool; limits?: ExportLimits; pageBytes?: number };
}

export function buildApp({ config, db, logger, listener, exports = {} }: AppDeps): FastifyInstance {
  const app = createService({
    ...listener,
    maxHeaderBytes: BEHIND_GATEWAY_MAX_HEADER_BYTES,
    logger,
    readiness: { postgresql: () => db.query('SELECT 1') },
    mapError: mapDatabaseError,
  });

  // Only the gateway (and the ui, acting for the merchant the gateway authenticated) speaks for a
  // merchant or resolves tokens; the operator API has its own admin token.
  const internalAuth = new InternalAuth(config.internalAuthSecrets);
  // Downloads (the transactions export, the statement) read on their own pool and share one set of slots.
  const downloads = { db: exports.db ?? db, slots: exportSlots(exports.limits ?? DEFAULT_EXPORT_LIMITS) };
  app.register(async (merchantApi) => {
    requireMerchant(merchantApi, internalAuth);
    createTransactionRoutes(merchantApi, db);
    callbackUrlRoutes(merchantApi, db, config.allowPrivateHosts);
    viewTransactionRoutes(merchantApi, db);
    endpointHealthRoutes(merchantApi, db);
    exportTransactionRoutes(merchantApi, { ...downloads, pageBytes: exports.pageBytes ?? DEFAULT_EXPORT_PAGE_BYTES });
    rotateCallbackSecretRoutes(merchantApi, db);
    redeliverCallbackRoutes(merchantApi, db, config.redeliveryMaxSeries);
    balanceRoutes(merchantApi, db, downloads);
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
