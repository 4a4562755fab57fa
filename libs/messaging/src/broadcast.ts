/**
 * Token-rotation broadcast: the merchant CLI tells every gateway replica to forget a merchant's
 * cached token. A fanout exchange gives each subscriber its own copy; each subscriber's queue is
 * server-named, exclusive and auto-deleted, so replicas come and go without leftovers.
 *
 * A broadcast is best-effort by nature (a gateway that is disconnected misses it), so subscribers
 * are told each time their subscription is (re)established: a gateway drops its whole cache then,
 * since rotations may have happened during the gap.
 */
import { connect } from 'amqplib';
import type { AmqpConnection } from './connection';
import { publishConfirmed } from './publish';
import { assertTopology, messagingNames, tokenTopology } from './topology';

export const TOKEN_ROTATED_TYPE = 'merchant.token_rotated';

export interface TokenRotationPublisher {
  /** Publishes one rotation and waits for the broker's confirm. */
  publish(merchantId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * For the CLI: connects and declares the fanout up front, so that a rotation is attempted only
 * once the broadcast that must follow it can be sent (an unreachable broker fails here, before
 * anything changes).
 */
export async function openTokenRotationPublisher(url: string, prefix: string): Promise<TokenRotationPublisher> {
  const connection = await connect(url, { clientProperties: { connection_name: 'merchant-cli' } });
  connection.on('error', () => undefined); // a failure surfaces through the awaited calls
  const close = () => connection.close().catch(() => undefined);
  try {
    const channel = await connection.createConfirmChannel();
    await assertTopology(channel, tokenTopology(prefix));
    const exchange = messagingNames(prefix).tokenExchange;
    return {
      publish: (merchantId) => publishConfirmed(channel, exchange, '', { merchantId }, { type: TOKEN_ROTATED_TYPE }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface TokenSubscriptionOptions {
  /** Called on every (re)subscription: rotations may have been missed while disconnected. */
  onSubscribed?: () => void;
}

export function subscribeTokenRotations(
  conn: AmqpConnection,
  prefix: string,
  onRotated: (merchantId: string) => void,
  options: TokenSubscriptionOptions = {},
): void {
  conn.onConnected(async (ctx) => {
    const channel = await ctx.createChannel();
    await assertTopology(channel, tokenTopology(prefix));
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
    await channel.bindQueue(queue, messagingNames(prefix).tokenExchange, '');
    // Losing a copy is harmless (the cache TTL bounds it), so the broker may ack on delivery.
    await ctx.consume(
      queue,
      async (message) => {
        const merchantId = parseMerchantId(message.content);
        if (merchantId) onRotated(merchantId);
      },
      { noAck: true },
    );
    options.onSubscribed?.();
  });
}

function parseMerchantId(content: Buffer): string | undefined {
  try {
    const body = JSON.parse(content.toString('utf8')) as { merchantId?: unknown };
    return typeof body.merchantId === 'string' ? body.merchantId : undefined;
  } catch {
    return undefined;
  }
}
