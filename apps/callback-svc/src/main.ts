import { ConfigError, loadCallbackConfig } from '@dw/config';
import { runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { createBrokerConnection } from './broker';
import { createPool } from './database';

async function main() {
  const config = loadCallbackConfig();
  const logger = createLogger('callback-svc', config.logLevel);
  const pool = createPool(config, logger);
  const amqp = createBrokerConnection(config, logger);
  const app = buildApp({ logger, amqp, pool });
  // Fastify stops serving first; then consumers hand back what they hold, then the pool they use goes.
  app.addHook('onClose', async () => {
    await amqp.close();
    await pool.end();
  });
  // Not awaited: the service listens (and /readyz says 503) while RabbitMQ is still out of reach.
  amqp.start();
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
