/**
 * What the outbox tests share: a unique AMQP prefix per file, a queue of our own bound to the
 * prefixed events exchange to watch what the relay publishes, relays on their own connections,
 * and a cleanup that deletes every queue and exchange the file made.
 */
import { AmqpConnection, callbackTopology, deleteTopology as deleteTopologyOf, messagingNames } from '@dw/messaging';
import { testPrefix } from '@dw/testing';
import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import pino from 'pino';
import { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from '../../src/outbox/outbox-relay';
import type { TestService } from '../support/service';

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const RETRY_DELAYS_MS = [1000];
export const silent = pino({ level: process.env.OUTBOX_TEST_LOG ?? 'silent' });

export const uniquePrefix = (label: string) => testPrefix(`outbox-${label}`);

export interface Observer {
  messages: ConsumeMessage[];
  /** Messages whose messageId is one of `ids`, waiting until each has arrived at least once. */
  waitForIds(ids: readonly string[], timeoutMs?: number): Promise<ConsumeMessage[]>;
  close(): Promise<void>;
}

/** A queue of our own bound to '#' on the events exchange: sees every message the relay publishes. */
export async function observeEvents(prefix: string): Promise<Observer> {
  const connection: ChannelModel = await connect(AMQP_URL);
  const channel = await connection.createChannel();
  const queue = `${prefix}test.observer`;
  const exchange = messagingNames(prefix).eventsExchange;
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: false, autoDelete: false });
  await channel.bindQueue(queue, exchange, '#');
  const messages: ConsumeMessage[] = [];
  await channel.consume(queue, (m) => m && messages.push(m), { noAck: true });
  return {
    messages,
    async waitForIds(ids, timeoutMs = 10_000) {
      const wanted = new Set(ids);
      const hits = () => messages.filter((m) => wanted.has(m.properties.messageId as string));
      await waitUntil(`${ids.length} messages`, () => new Set(hits().map((m) => m.properties.messageId)).size === wanted.size, timeoutMs);
      return hits();
    },
    async close() {
      await channel.deleteQueue(queue);
      await connection.close();
    },
  };
}

/** Deletes the callback topology of `prefix` (the relay asserts it). */
export async function deleteTopology(prefix: string): Promise<void> {
  const connection = await connect(AMQP_URL);
  const channel = await connection.createChannel();
  await deleteTopologyOf(channel, callbackTopology({ prefix, retryDelaysMs: RETRY_DELAYS_MS }));
  await connection.close();
}

export interface RunningRelay {
  amqp: AmqpConnection;
  relay: OutboxRelay;
  stop(): Promise<void>;
}

/** A relay on its own AMQP connection (reconnecting quickly, for tests), as relay-process.ts wires it. */
export function runRelay(
  prefix: string,
  databaseUrl: string,
  options: Partial<OutboxRelayOptions> & { amqpUrl?: string } = {},
): RunningRelay {
  const { amqpUrl = AMQP_URL, ...rest } = options;
  const amqp = new AmqpConnection({ url: amqpUrl, name: `${prefix}relay`, logger: silent, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
  const relay = startOutboxRelay({ databaseUrl, amqp, prefix, retryDelaysMs: RETRY_DELAYS_MS, logger: silent, ...rest });
  amqp.start();
  return {
    amqp,
    relay,
    async stop() {
      await relay.stop();
      await amqp.close();
    },
  };
}

let orders = 0;
/** Creates a deposit through the route; returns the transaction id. */
export async function createDeposit(svc: TestService, amount = '10.00'): Promise<string> {
  const res = await svc.as(svc.merchantA, {
    method: 'POST',
    url: '/api/createDeposit',
    payload: { amount, currency: 'USD', orderId: `outbox-${process.pid}-${Date.now()}-${++orders}` },
  });
  if (res.statusCode !== 201) throw new Error(`createDeposit answered ${res.statusCode}: ${res.body}`);
  return res.json().id as string;
}

export interface EventRowView {
  event_id: string;
  /** What the outbox publishes it with: the event type. */
  routing_key: string;
  payload: any;
  merchant_id: string;
  traceparent: string | null;
}

/**
 * One transaction's events, in sequence order: what the outbox was given for each. Read from
 * transaction_events, since the relay deletes an outbox row once it is published.
 */
export function eventsOf(svc: TestService, transactionId: string): Promise<EventRowView[]> {
  return svc.db.$queryRaw<EventRowView[]>`
    SELECT e.id AS event_id, e.type AS routing_key, e.payload, e.merchant_id::text AS merchant_id, e.traceparent
    FROM transaction_events e
    WHERE e.transaction_id = ${transactionId}::uuid ORDER BY e.sequence`;
}

/** How many of these events still have their outbox row (not yet published). */
export async function unpublishedCount(svc: TestService, eventIds: string[]): Promise<number> {
  const [row] = await svc.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM outbox WHERE event_id = ANY(${eventIds})`;
  return Number(row!.n);
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
