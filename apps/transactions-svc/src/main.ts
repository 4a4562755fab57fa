import { ConfigError, loadTransactionsConfig } from '@dw/config';
import { runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { createPool } from './db/pool';
import { startBalanceCheckJob, type BalanceCheckJob } from './ledger/balance-check-job';
import { outboxRelayProcess } from './outbox/relay-process';
import { startRetentionJob, type RetentionJob } from './retention/retention-job';

async function main() {
  const config = loadTransactionsConfig();
  const logger = createLogger('transactions-svc', config.logLevel);
  const db = createPool(config.databaseUrl, config.databasePoolSize);
  const app = buildApp({ config, db, logger });
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
    await db.end();
  });
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs, metricsPort: config.metricsPort });
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
