import type { CallbackConfig } from '@dw/config';
import { messagingNames, THROTTLE_DELAYS_MS, type AmqpConnection, type MessagingLogger } from '@dw/messaging';
import type { Pool } from 'pg';
import {
  abortedSendBounds,
  createCallbackSender,
  createDeliveryHandler,
  MerchantShares,
  retryPlan,
  startSweeper,
} from './delivery';

export interface DeliveryConsumerDeps {
  config: Pick<
    CallbackConfig,
    | 'amqpPrefix'
    | 'prefetch'
    | 'manualPrefetch'
    | 'callbackTimeoutMs'
    | 'retryDelaysMs'
    | 'allowPrivateHosts'
    | 'merchantConcurrency'
    | 'slowMerchantConcurrency'
    | 'slowAfterMs'
    | 'sweepIntervalMs'
    | 'sweepAfterMs'
    | 'shutdownTimeoutMs'
  >;
  amqp: AmqpConnection;
  pool: Pool;
  logger: MessagingLogger;
}

export interface DeliveryConsumer {
  /** Hands every message waiting for its merchant's slot back to RabbitMQ; call as `amqp.close()` begins. */
  handBackWaiting(): void;
  /**
   * Cuts the sends in flight short. One whose request went out is a failed attempt: recorded, its
   * retry published (or its delivery failed) and its message acked, within a bound of the shutdown
   * budget. One still connecting, or whose attempt cannot be recorded in time, releases its claim and
   * hands its message back unacked. Call when the shutdown budget no longer allows them to finish.
   */
  abortSends(): void;
  /** Closes the HTTP pools; call after `amqp.close()` has let in-flight deliveries finish. */
  close(): Promise<void>;
}

/** A claim outlives the longest attempt by this much before another copy may take the attempt over. */
const CLAIM_MARGIN_MS = 5_000;
/** What the sweeper adds to the longest waits before it calls a delivery's message lost. */
const SWEEP_MARGIN_MS = 60_000;

/** CALLBACK_SWEEP_AFTER_MS, or (0) longer than any message of a live delivery can go unseen. */
export function sweepAfterMs(config: Pick<CallbackConfig, 'sweepAfterMs' | 'retryDelaysMs' | 'callbackTimeoutMs'>): number {
  if (config.sweepAfterMs > 0) return config.sweepAfterMs;
  return Math.max(...config.retryDelaysMs) + Math.max(...THROTTLE_DELAYS_MS) + config.callbackTimeoutMs + SWEEP_MARGIN_MS;
}

/**
 * Subscribes to both lanes' queues (now and after every reconnect). Each channel's prefetch bounds
 * the messages this process holds from its lane; each merchant's share (MerchantShares, one for
 * both lanes) bounds how many of them are in flight for one merchant, so a merchant whose endpoint
 * hangs cannot fill the prefetch. The manual lane (recoveries, redeliveries, sweeps) has a small
 * prefetch of its own, so a burst a merchant starts at will never holds the automatic lane's.
 */
export function consumeDeliveries({ config, amqp, pool, logger }: DeliveryConsumerDeps): DeliveryConsumer {
  const names = messagingNames(config.amqpPrefix);
  const sender = createCallbackSender({ timeoutMs: config.callbackTimeoutMs, allowPrivateHosts: config.allowPrivateHosts });
  const shares = new MerchantShares({
    perMerchant: config.merchantConcurrency,
    slowPerMerchant: config.slowMerchantConcurrency,
    slowAfterMs: config.slowAfterMs,
    capacity: config.prefetch,
    horizonMs: Math.max(...THROTTLE_DELAYS_MS),
  });
  const handlerFor = createDeliveryHandler({
    pool,
    amqp,
    sender,
    plan: retryPlan(config.retryDelaysMs),
    shares,
    claimLeaseMs: config.callbackTimeoutMs + CLAIM_MARGIN_MS,
    abortedSend: abortedSendBounds(config.shutdownTimeoutMs),
    logger,
  });
  amqp.consume(names.deliverQueue, handlerFor(names.lane('automatic')), { prefetch: config.prefetch });
  amqp.consume(names.manualQueue, handlerFor(names.lane('manual')), { prefetch: config.manualPrefetch });
  const sweeper = startSweeper({ pool, amqp, names, intervalMs: config.sweepIntervalMs, staleAfterMs: sweepAfterMs(config), logger });
  return {
    handBackWaiting: () => shares.close(),
    abortSends: () => sender.abortAll(),
    close: async () => {
      await sweeper.stop();
      await sender.close();
    },
  };
}
