import { ConfigError, loadCallbackConfig } from '@dw/config';
import { createPool } from '@dw/db';
import { listenerSettings, runMain, runService } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { createBrokerConnection } from './broker';
import { consumeDeliveries } from './delivery-consumer';

async function main() {
  const config = loadCallbackConfig();
  const logger = createLogger('callback-svc', config.logLevel);
  // The delivery status and the attempt log. A session the server dropped while idle is only logged:
  // the next query opens a fresh one.
  const pool = createPool(config.databaseUrl, config.databasePoolSize, {
    applicationName: 'dw-callback-svc',
    onIdleError: (err) => logger.warn({ err: { message: err.message } }, 'idle PostgreSQL connection lost'),
  });
  const amqp = createBrokerConnection(config, logger);
  const deliveries = consumeDeliveries({ config, amqp, pool, logger });
  const app = buildApp({ logger, amqp, pool, listener: listenerSettings(config) });
  // Fastify stops serving first; then the consumer stops taking messages and lets the deliveries in
  // flight finish and ack (what is still unacked returns to RabbitMQ), then what they used goes.
  // A callback may take CALLBACK_TIMEOUT_MS, longer than the whole budget: sends still running after
  // half of it are aborted. Those whose request went out are failed attempts, recorded and retried on
  // schedule (those still connecting are handed back unrecorded); the other half is for that
  // bookkeeping (bounded: settle-aborted.ts), closing and flushing telemetry.
  app.addHook('onClose', async () => {
    const closing = amqp.close(); // takes no new messages from here on
    deliveries.handBackWaiting();
    const abortTimer = setTimeout(() => deliveries.abortSends(), config.shutdownTimeoutMs / 2);
    await closing;
    clearTimeout(abortTimer);
    await deliveries.close();
    await pool.end();
  });
  // Not awaited: the service listens (and /readyz says 503) while RabbitMQ is still out of reach.
  amqp.start();
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs, metricsPort: config.metricsPort });
}

runMain(main, [ConfigError]);
