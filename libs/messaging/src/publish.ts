/**
 * Publishing that is done only when the broker says so: the promise resolves on the publisher
 * confirm (the message is in every queue it was routed to, persisted when persistent) and rejects
 * on a nack, on the channel closing first, or, for `mandatory` messages, when no queue took it.
 * Callers mark their work done (an outbox row sent, a delivery acked) only after it resolves.
 */
import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage, Options } from 'amqplib';

export class UnroutableError extends Error {
  constructor(
    public readonly exchange: string,
    public readonly routingKey: string,
  ) {
    super(`no queue is bound for routing key "${routingKey}" on exchange "${exchange || '(default)'}"`);
    this.name = 'UnroutableError';
  }
}

export interface PublishOptions extends Options.Publish {
  headers?: Record<string, unknown>;
  messageId?: string;
  /** Default true: survives a broker restart once confirmed. */
  persistent?: boolean;
  /** Reject with UnroutableError when the message reached no queue (a confirm alone does not say so). */
  mandatory?: boolean;
}

interface ChannelState {
  /** Set while the socket buffer is full; later publishes wait for 'drain'. */
  draining?: Promise<void>;
  /** Message ids of in-flight mandatory publishes → whether the broker returned them. */
  returned: Map<string, boolean>;
}

const states = new WeakMap<ConfirmChannel, ChannelState>();

function stateOf(channel: ConfirmChannel): ChannelState {
  let state = states.get(channel);
  if (!state) {
    const created: ChannelState = { returned: new Map() };
    // RabbitMQ sends basic.return before the basic.ack of the same message, so the flag is set
    // by the time the confirm callback reads it.
    channel.on('return', (msg: ConsumeMessage) => {
      const id = msg.properties.messageId as string | undefined;
      if (id !== undefined && created.returned.has(id)) created.returned.set(id, true);
    });
    states.set(channel, created);
    state = created;
  }
  return state;
}

function waitForDrain(channel: ConfirmChannel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off('drain', done);
      channel.off('close', done);
      resolve();
    };
    channel.on('drain', done);
    channel.on('close', done); // a closed channel rejects the next publish itself
  });
}

function encode(body: Buffer | object): { content: Buffer; contentType?: string } {
  if (Buffer.isBuffer(body)) return { content: body };
  return { content: Buffer.from(JSON.stringify(body)), contentType: 'application/json' };
}

export async function publishConfirmed(
  channel: ConfirmChannel,
  exchange: string,
  routingKey: string,
  body: Buffer | object,
  options: PublishOptions = {},
): Promise<void> {
  const state = stateOf(channel);
  while (state.draining) await state.draining;

  const { content, contentType } = encode(body);
  const messageId = options.messageId ?? (options.mandatory ? randomUUID() : undefined);
  const props: Options.Publish = { contentType, ...options, messageId, persistent: options.persistent ?? true };
  if (options.mandatory) state.returned.set(messageId!, false);

  await new Promise<void>((resolve, reject) => {
    const onConfirm = (err: unknown) => {
      const wasReturned = options.mandatory ? state.returned.get(messageId!) : false;
      if (options.mandatory) state.returned.delete(messageId!);
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else if (wasReturned) reject(new UnroutableError(exchange, routingKey));
      else resolve();
    };
    try {
      const flushed = channel.publish(exchange, routingKey, content, props, onConfirm);
      if (!flushed && !state.draining) {
        state.draining = waitForDrain(channel).finally(() => {
          state.draining = undefined;
        });
      }
    } catch (err) {
      // A closed channel throws IllegalOperationError synchronously; no confirm will come.
      if (options.mandatory) state.returned.delete(messageId!);
      reject(err);
    }
  });
}

export class ConfirmTimeoutError extends Error {
  constructor(ms: number) {
    super(`RabbitMQ did not confirm the batch within ${ms} ms`);
    this.name = 'ConfirmTimeoutError';
  }
}

/**
 * Rejects with ConfirmTimeoutError once `ms` have passed without `confirms` settling: bounds how
 * long rows claimed for a publish stay locked while the broker stalls (flow control, a hung socket).
 */
export function confirmedWithin<T>(confirms: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConfirmTimeoutError(ms)), ms);
  });
  return Promise.race([confirms, timeout]).finally(() => clearTimeout(timer));
}
