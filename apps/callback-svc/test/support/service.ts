/**
 * callback-svc's delivery path as main.ts wires it (pool, broker connection with the callback
 * topology, the delivery consumer), on a per-file queue prefix, plus a publisher that sends events
 * the way the outbox relay does.
 */
import { loadCallbackConfig, type CallbackConfig } from '@dw/config';
import { createPool } from '@dw/db';
import { callbackTopology, deleteTopology, MANUAL_ROUTING_PREFIX, messagingNames, type AmqpConnection } from '@dw/messaging';
import { createLogger } from '@dw/telemetry';
import { connect, type ChannelModel, type ConfirmChannel, type GetMessage } from 'amqplib';
import type { Pool } from 'pg';
import { createBrokerConnection } from '../../src/broker';
import { consumeDeliveries, type DeliveryConsumer } from '../../src/delivery-consumer';

export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** The service's config for a test: short retries, a short timeout, private hosts allowed. */
export function testConfig(prefix: string, databaseUrl: string, env: Record<string, string> = {}): CallbackConfig {
  return loadCallbackConfig({
    AMQP_URL,
    AMQP_PREFIX: prefix,
    DATABASE_URL: databaseUrl,
    CALLBACK_RETRY_DELAYS_MS: '300,600,1200,2400,4800',
    CALLBACK_TIMEOUT_MS: '500',
    CALLBACK_ALLOW_PRIVATE_HOSTS: 'true',
    CALLBACK_PREFETCH: '8',
    ...env,
  });
}

export interface RunningService {
  amqp: AmqpConnection;
  pool: Pool;
  deliveries: DeliveryConsumer;
  stop(): Promise<void>;
}

export async function startService(config: CallbackConfig, logLevel = 'silent'): Promise<RunningService> {
  const logger = createLogger('callback-svc-test', logLevel);
  const pool = createPool(config.databaseUrl, config.databasePoolSize, { applicationName: 'dw-callback-svc' });
  const amqp = createBrokerConnection(config, logger);
  const deliveries = consumeDeliveries({ config, amqp, pool, logger });
  amqp.start();
  await amqp.whenConnected();
  let stopped: Promise<void> | undefined;
  return {
    amqp,
    pool,
    deliveries,
    stop() {
      stopped ??= (async () => {
        const closing = amqp.close();
        deliveries.handBackWaiting();
        await closing;
        await deliveries.close();
        await pool.end();
      })();
      return stopped;
    },
  };
}

/** Publishes like the outbox relay: body = callbackBody bytes, messageId = event id, traceparent header. */
export class TestPublisher {
  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
    private readonly prefix: string,
  ) {}

  static async open(prefix: string): Promise<TestPublisher> {
    const connection = await connect(AMQP_URL);
    const channel = await connection.createConfirmChannel();
    return new TestPublisher(connection, channel, prefix);
  }

  async publish(
    event: { id: string; type: string; body: string | Buffer },
    headers: Record<string, unknown> = {},
    messageId: string | undefined = event.id,
    routingKey = event.type,
  ) {
    const names = messagingNames(this.prefix);
    this.channel.publish(names.eventsExchange, routingKey, Buffer.from(event.body), {
      persistent: true,
      contentType: 'application/json',
      messageId,
      headers,
    });
    await this.channel.waitForConfirms();
  }

  /** Publishes like the relay publishes a series a merchant started: to the manual lane. */
  publishManual(event: { id: string; type: string; body: string | Buffer }, headers: Record<string, unknown>) {
    return this.publish(event, headers, event.id, `${MANUAL_ROUTING_PREFIX}${event.type}`);
  }

  /** Messages ready (not unacked) in one of the prefix's queues. */
  async depth(queue: string): Promise<number> {
    const channel = await this.connection.createChannel();
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await channel.close();
    }
  }

  /** Messages waiting (ready, not unacked) in the delivery queue. */
  async readyInDeliveryQueue(): Promise<number> {
    const channel = await this.connection.createChannel();
    try {
      return (await channel.checkQueue(messagingNames(this.prefix).deliverQueue)).messageCount;
    } finally {
      await channel.close();
    }
  }

  /** Takes (and acks) the next ready message of the delivery queue; undefined when there is none. */
  async takeFromDeliveryQueue(): Promise<GetMessage | undefined> {
    const channel = await this.connection.createChannel();
    try {
      const message = await channel.get(messagingNames(this.prefix).deliverQueue, { noAck: true });
      return message || undefined;
    } finally {
      await channel.close();
    }
  }

  /** Closes the publisher and deletes every queue and exchange of the prefix. */
  async closeAndDeleteTopology(retryDelaysMs: readonly number[]): Promise<void> {
    await deleteTopology(await this.connection.createChannel(), callbackTopology({ prefix: this.prefix, retryDelaysMs }));
    await this.connection.close();
  }
}
