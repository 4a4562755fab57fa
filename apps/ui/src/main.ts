import { ConfigError, loadUiConfig } from '@dw/config';
import { runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { transactionsClient } from './transactions-client';

async function main() {
  const config = loadUiConfig();
  const logger = createLogger('ui', config.logLevel);
  const transactions = transactionsClient(config.transactionsUrl, config.upstreamTimeoutMs);
  const app = buildApp({ logger, transactions });
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
