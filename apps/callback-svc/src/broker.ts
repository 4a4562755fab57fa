import { hostname } from 'node:os';
import type { CallbackConfig } from '@dw/config';
import { AmqpConnection, callbackTopology, type MessagingLogger } from '@dw/messaging';

/**
 * The service's one RabbitMQ connection: it asserts the callback topology (delivery queue, one
 * retry queue per configured delay) on every connect. Named per process, so an operator can tell
 * replicas apart in `rabbitmqctl list_connections client_properties`.
 */
export function createBrokerConnection(
  config: Pick<CallbackConfig, 'amqpUrl' | 'amqpPrefix' | 'retryDelaysMs' | 'deliveryLimit'>,
  logger: MessagingLogger,
): AmqpConnection {
  return new AmqpConnection({
    url: config.amqpUrl,
    name: `callback-svc@${hostname()}:${process.pid}`,
    logger,
    topology: callbackTopology({ prefix: config.amqpPrefix, retryDelaysMs: config.retryDelaysMs, deliveryLimit: config.deliveryLimit }),
  });
}
