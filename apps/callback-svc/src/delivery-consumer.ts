import type { CallbackConfig } from '@dw/config';
import { messagingNames, type AmqpConnection, type MessagingLogger } from '@dw/messaging';
import type { Pool } from 'pg';
import { createCallbackSender, createDeliveryHandler, retryPlan } from './delivery';

export interface DeliveryConsumerDeps {
  config: Pick<CallbackConfig, 'amqpPrefix' | 'prefetch' | 'callbackTimeoutMs' | 'retryDelaysMs' | 'allowPrivateHosts'>;
  amqp: AmqpConnection;
  pool: Pool;
  logger: MessagingLogger;
}

export interface DeliveryConsumer {
  /** Closes the HTTP pools; call after `amqp.close()` has let in-flight deliveries finish. */
  close(): Promise<void>;
}

/**
 * Subscribes to the delivery queue (now and after every reconnect). The channel's prefetch is the
 * number of deliveries in flight: each delivered message runs its handler at once, and the broker
 * sends the next only when one is acked or handed back.
 */
export function consumeDeliveries({ config, amqp, pool, logger }: DeliveryConsumerDeps): DeliveryConsumer {
  const names = messagingNames(config.amqpPrefix);
  const sender = createCallbackSender({ timeoutMs: config.callbackTimeoutMs, allowPrivateHosts: config.allowPrivateHosts });
  const handler = createDeliveryHandler({ pool, amqp, names, sender, plan: retryPlan(config.retryDelaysMs), logger });
  amqp.consume(names.deliverQueue, handler, { prefetch: config.prefetch });
  return { close: () => sender.close() };
}
