import { ConfigError, loadUiConfig } from '@dw/config';
import { InternalAuth, listenerSettings, runMain, runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { transactionsClient } from './transactions-client';

async function main() {
  const config = loadUiConfig();
  const logger = createLogger('ui', config.logLevel);
  const internalAuth = new InternalAuth(config.internalAuthSecrets);
  const transactions = transactionsClient(config.transactionsUrl, config.upstreamTimeoutMs, internalAuth);
  const app = buildApp({ logger, transactions, internalAuth, listener: listenerSettings(config) });
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs, metricsPort: config.metricsPort });
}

runMain(main, [ConfigError]);
