/** Builds the callback-svc Fastify instance (health, readiness, metrics only); main.ts starts it. */
import { createService, type ListenerSettings } from '@dw/http-kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Pool } from 'pg';

export interface AppDeps {
  logger: FastifyBaseLogger;
  /** The broker connection; ready only while connected with its topology asserted. */
  amqp: { isConnected(): boolean };
  pool: Pool;
  /** METRICS_PORT and CLIENT_STALL_TIMEOUT_MS (defaults when omitted). */
  listener?: ListenerSettings;
}

export function buildApp({ logger, amqp, pool, listener }: AppDeps): FastifyInstance {
  return createService({
    ...listener,
    logger,
    readiness: {
      rabbitmq: async () => {
        if (!amqp.isConnected()) throw new Error('not connected to RabbitMQ');
      },
      postgresql: () => pool.query('SELECT 1'),
    },
  });
}
