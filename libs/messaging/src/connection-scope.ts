/**
 * Everything that lives and dies with one AMQP connection: its channels, its consumers and its
 * confirm channel. A reconnect builds a fresh scope; nothing is carried over but the setup code.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { MessagingLogger } from './logger';

/** Resolving acks the message; throwing hands it back to the queue after a pause. */
export type MessageHandler = (message: ConsumeMessage) => Promise<void>;

/**
 * Thrown by a handler that hands its message back on purpose (it is shutting down, say): the
 * message returns to its queue at once, with no error logged and no pause.
 */
export class HandBackError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'HandBackError';
  }
}

export interface ConsumeOptions {
  /** Unacked messages this consumer may hold at once (its channel's prefetch). Default 1. */
  prefetch?: number;
  /** Broker-side auto-ack, for messages that may be lost (broadcasts). Default false. */
  noAck?: boolean;
}

/** What an `onConnected` setup receives: the live connection and helpers that watch what they open. */
export interface ConnectedContext {
  readonly connection: ChannelModel;
  /** A channel whose unexpected close (a channel error) makes the manager reconnect from scratch. */
  createChannel(options?: { prefetch?: number }): Promise<Channel>;
  /** Subscribes `handler` on its own channel; returns the consumer tag. */
  consume(queue: string, handler: MessageHandler, options?: ConsumeOptions): Promise<string>;
}

/** What the scope needs from its manager. */
export interface ScopeHooks {
  logger: MessagingLogger;
  isClosing(): boolean;
  track(work: Promise<unknown>): void;
  /** Pause before handing back a message whose handler threw, so a failing handler cannot spin. */
  requeueDelayMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ConnectionScope implements ConnectedContext {
  private closed = false;
  private readonly consumers: Array<{ channel: Channel; tag: string }> = [];
  private readonly channels = new Set<Channel>();
  private readonly closingOnPurpose = new WeakSet<Channel>();
  private confirm?: Promise<ConfirmChannel>;

  constructor(
    readonly connection: ChannelModel,
    private readonly hooks: ScopeHooks,
  ) {
    // Without an 'error' listener an emitter throws, and a broker going away would kill the process.
    connection.on('error', (err: Error) => hooks.logger.warn({ err }, 'AMQP connection error'));
    connection.on('close', () => {
      this.closed = true;
    });
  }

  async createChannel(options: { prefetch?: number } = {}): Promise<Channel> {
    const channel = await this.connection.createChannel();
    this.channels.add(channel);
    channel.on('error', (err: Error) => this.hooks.logger.warn({ err }, 'AMQP channel error'));
    channel.on('close', () => {
      this.channels.delete(channel);
      // A dying connection closes its channels just before it reports its own close: look after it.
      setImmediate(() => {
        if (!this.closingOnPurpose.has(channel)) this.recycle('an AMQP channel closed unexpectedly');
      });
    });
    if (options.prefetch !== undefined) await channel.prefetch(options.prefetch);
    return channel;
  }

  /** Closes a channel made by createChannel without treating it as a fault. */
  async closeChannel(channel: Channel): Promise<void> {
    this.closingOnPurpose.add(channel);
    await channel.close().catch(() => undefined);
  }

  /** One confirm channel per connection; a channel error (say, a missing exchange) only replaces it. */
  confirmChannel(): Promise<ConfirmChannel> {
    this.confirm ??= this.openConfirmChannel().catch((err) => {
      this.confirm = undefined;
      throw err;
    });
    return this.confirm;
  }

  private async openConfirmChannel(): Promise<ConfirmChannel> {
    const channel = await this.connection.createConfirmChannel();
    const mine = this.confirm;
    channel.on('error', (err: Error) => this.hooks.logger.warn({ err }, 'AMQP confirm channel error'));
    channel.on('close', () => {
      if (this.confirm === mine) this.confirm = undefined;
    });
    return channel;
  }

  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<string> {
    const channel = await this.createChannel({ prefetch: options.prefetch ?? 1 });
    const noAck = options.noAck ?? false;
    const { consumerTag } = await channel.consume(
      queue,
      (message) => {
        // null: the broker cancelled the consumer (its queue was deleted): resubscribe from scratch.
        if (message === null) return this.recycle(`the broker cancelled the consumer of ${queue}`);
        this.hooks.track(this.handle(channel, message, handler, noAck));
      },
      { noAck },
    );
    this.consumers.push({ channel, tag: consumerTag });
    return consumerTag;
  }

  private async handle(channel: Channel, message: ConsumeMessage, handler: MessageHandler, noAck: boolean) {
    // Shutting down: take no new work; the message goes back to the queue at once.
    if (this.hooks.isClosing() && !noAck) return this.settle(channel, message, 'nack');
    try {
      await handler(message);
      if (!noAck) this.settle(channel, message, 'ack');
    } catch (err) {
      if (err instanceof HandBackError) {
        if (!noAck) this.settle(channel, message, 'nack');
        return;
      }
      this.hooks.logger.error({ err, queue: message.fields.routingKey }, 'message handler failed; handing the message back');
      if (noAck) return;
      await sleep(this.hooks.requeueDelayMs);
      this.settle(channel, message, 'nack');
    }
  }

  private settle(channel: Channel, message: ConsumeMessage, how: 'ack' | 'nack'): void {
    try {
      if (how === 'ack') channel.ack(message);
      else channel.nack(message, false, true);
    } catch {
      // The channel died meanwhile; the broker already returned the message to its queue.
      this.hooks.logger.debug?.({ deliveryTag: message.fields.deliveryTag }, `could not ${how}: channel closed`);
    }
  }

  /** Stops deliveries to every consumer; messages already delivered keep their handlers. */
  async cancelConsumers(): Promise<void> {
    await Promise.all(this.consumers.map(({ channel, tag }) => channel.cancel(tag).catch(() => undefined)));
  }

  /**
   * Closes every channel in turn before the connection goes: a channel's close frame follows its
   * last acks on the same stream, whereas a connection close could overtake them.
   */
  async closeChannels(): Promise<void> {
    const confirm = this.confirm;
    this.confirm = undefined;
    const all = [...this.channels];
    await Promise.all(all.map((channel) => this.closeChannel(channel)));
    if (confirm) await confirm.then((channel) => channel.close()).catch(() => undefined);
  }

  /** A broken channel leaves its consumer dead: closing the connection lets recovery rebuild all. */
  private recycle(reason: string): void {
    if (this.closed || this.hooks.isClosing()) return;
    this.closed = true;
    this.hooks.logger.warn({ reason }, 'reconnecting to RabbitMQ to restore channels');
    this.connection.close().catch(() => undefined);
  }
}
