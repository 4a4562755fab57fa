import { ConfigError, loadTransactionsConfig } from '@dw/config';
import { listenerSettings, runMain, runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { EXPORT_SESSION_SETTINGS } from './domain/transaction-export';
import { createPool } from '@dw/db';
import { startBalanceCheckJob, type BalanceCheckJob } from './ledger/balance-check-job';
import { outboxRelayProcess } from './outbox/relay-process';
import { startRetentionJob, type RetentionJob } from './retention/retention-job';

async function main() {
  const config = loadTransactionsConfig();
  const logger = createLogger('transactions-svc', config.logLevel);
  const db = createPool(config.databaseUrl, config.databasePoolSize);
  // The exports read on a small pool of their own: however many stream, creates never wait behind them.
  const exportDb = createPool(config.databaseUrl, config.exportDatabasePoolSize, { applicationName: 'dw-transactions-svc-export', settings: EXPORT_SESSION_SETTINGS });
  const app = buildApp({
    config,
    db,
    logger,
    listener: listenerSettings(config),
    exports: {
      db: exportDb,
      limits: { perMerchant: config.exportConcurrencyPerMerchant, perProcess: config.exportConcurrency },
      pageBytes: config.exportPageBytes,
    },
  });
  const relay = outboxRelayProcess(config, logger);
  let retention: RetentionJob | undefined;
  let balanceCheck: BalanceCheckJob | undefined;
  app.addHook('onListen', async () => {
    relay.start();
    // Every replica runs it; their batches never overlap (SKIP LOCKED). 0 keeps events forever.
    retention = startRetentionJob(db, logger, { retentionDays: config.eventRetentionDays });
    balanceCheck = startBalanceCheckJob(db, logger);
  });
  app.addHook('onClose', async () => {
    await retention?.stop();
    await balanceCheck?.stop();
    await relay.stop();
    await Promise.all([db.end(), exportDb.end()]);
  });
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs, metricsPort: config.metricsPort });
}

runMain(main, [ConfigError]);
