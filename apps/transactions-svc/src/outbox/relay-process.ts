/**
 * The relay as transactions-svc runs it: its own RabbitMQ connection (named per process for
 * `rabbitmqctl list_connections`), started once the HTTP server listens and never part of
 * readiness: the service needs PostgreSQL only, creates keep working while the broker is away.
 *
 * The retry delays and the delivery limit are callback-svc's settings (CALLBACK_RETRY_DELAYS_MS and
 * CALLBACK_DELIVERY_LIMIT, read through the same
 * definition): the relay asserts the identical topology, since a queue declared with other
 * arguments would be refused.
 */
import { hostname } from 'node:os';
import { callbackSpec, parseEnv, type Env, type TransactionsConfig } from '@dw/config';
import { AmqpConnection, type MessagingLogger } from '@dw/messaging';
import { startOutboxRelay, type OutboxRelay } from './outbox-relay';

export interface RelayProcess {
  start(): void;
  stop(): Promise<void>;
}

type RelayConfig = Pick<TransactionsConfig, 'databaseUrl' | 'amqpUrl' | 'amqpPrefix'>;

/** Reads its settings at once, so a wrong CALLBACK_RETRY_DELAYS_MS stops the boot with a clear message. */
export function outboxRelayProcess(config: RelayConfig, logger: MessagingLogger, env: Env = process.env): RelayProcess {
  const { retryDelaysMs, deliveryLimit } = parseEnv({ retryDelaysMs: callbackSpec.retryDelaysMs, deliveryLimit: callbackSpec.deliveryLimit }, env);
  const amqp = new AmqpConnection({ url: config.amqpUrl, name: `transactions-svc-relay@${hostname()}:${process.pid}`, logger });
  let relay: OutboxRelay | undefined;
  return {
    start() {
      relay ??= startOutboxRelay({ databaseUrl: config.databaseUrl, amqp, prefix: config.amqpPrefix, retryDelaysMs, deliveryLimit, logger });
      amqp.start();
    },
    async stop() {
      // The relay first: its pass under way finishes (or rolls back) while the channel still exists.
      await relay?.stop();
      await amqp.close();
    },
  };
}
