import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { AmqpConnection, callbackTopology, messagingNames, publishConfirmed } from '../src';
import { AMQP_URL, deleteAll, forceCloseConnection, openAdmin, recordingLogger, sleep, uniquePrefix, waitUntil } from './support';

const prefix = uniquePrefix('connection');
const names = messagingNames(prefix);
const topology = callbackTopology({ prefix, retryDelaysMs: [200] });
const connectionName = `${prefix}under-test`;

let admin: { connection: ChannelModel; channel: Channel };
const managers: AmqpConnection[] = [];

function manager(overrides: Partial<ConstructorParameters<typeof AmqpConnection>[0]> = {}) {
  const logger = recordingLogger();
  const conn = new AmqpConnection({
    url: AMQP_URL,
    name: connectionName,
    logger,
    topology,
    reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    requeueDelayMs: 50,
    ...overrides,
  });
  managers.push(conn);
  return { conn, logger };
}

beforeAll(async () => {
  admin = await openAdmin();
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
  await admin.channel.purgeQueue(names.deliverQueue).catch(() => undefined);
});

afterAll(async () => {
  await admin.connection.close();
  await deleteAll(topology);
});

describe('AmqpConnection start', () => {
  it('connects, asserts the topology, and reports itself connected', async () => {
    await deleteAll(topology);
    const { conn, logger } = manager();
    expect(conn.isConnected()).toBe(false);
    conn.start();
    await conn.whenConnected();
    expect(conn.isConnected()).toBe(true);
    for (const q of topology.queues) await expect(admin.channel.checkQueue(q.name)).resolves.toBeDefined();
    expect(logger.lines.map((l) => l.msg)).toContain('connected to RabbitMQ');
  });

  it('keeps retrying, without throwing, while the broker cannot be reached', async () => {
    const { conn, logger } = manager({ url: 'amqp://guest:guest@127.0.0.1:1' });
    conn.start();
    await waitUntil('two failed attempts are logged', () => logger.lines.filter((l) => l.msg === 'could not connect to RabbitMQ').length >= 2);
    expect(conn.isConnected()).toBe(false);
    await conn.close();
    await expect(conn.whenConnected()).rejects.toThrow(/closed/);
  });

  it('keeps retrying, without crashing, while a queue exists with other arguments (PRECONDITION_FAILED)', async () => {
    const clash = callbackTopology({ prefix: `${prefix}clash.`, retryDelaysMs: [200] });
    const retryQueue = clash.queues[1]!.name;
    await admin.channel.assertQueue(retryQueue, { durable: true }); // a classic queue without TTL
    try {
      const { conn, logger } = manager({ topology: clash });
      conn.start();
      await waitUntil('the refusal is logged twice', () => logger.lines.filter((l) => l.msg === 'could not connect to RabbitMQ').length >= 2);
      expect(conn.isConnected()).toBe(false);
    } finally {
      await deleteAll(clash);
    }
  });
});

describe('AmqpConnection consumers', () => {
  it('acks a message whose handler resolves and hands back one whose handler throws', async () => {
    const { conn } = manager();
    const seen: string[] = [];
    conn.consume(names.deliverQueue, async (msg) => {
      seen.push(`${msg.content.toString()}${msg.fields.redelivered ? ' (again)' : ''}`);
      if (msg.content.toString() === 'fail-once' && !msg.fields.redelivered) throw new Error('boom');
    });
    conn.start();
    const channel = await conn.confirmChannel();
    await publishConfirmed(channel, names.eventsExchange, 'deposit.pending', Buffer.from('ok'));
    await publishConfirmed(channel, names.eventsExchange, 'deposit.pending', Buffer.from('fail-once'));
    await waitUntil('the failed one comes back', () => seen.includes('fail-once (again)'));
    expect(seen).toEqual(['ok', 'fail-once', 'fail-once (again)']);
    await sleep(200);
    expect((await admin.channel.checkQueue(names.deliverQueue)).messageCount).toBe(0);
  });

  it('reconnects after the broker closes its connection, and the consumer receives again', async () => {
    const { conn, logger } = manager();
    const seen: string[] = [];
    conn.consume(names.deliverQueue, async (msg) => void seen.push(msg.content.toString()));
    conn.start();
    await conn.whenConnected();
    await publishConfirmed(await conn.confirmChannel(), names.eventsExchange, 'deposit.pending', Buffer.from('before'));
    await waitUntil('the first message arrives', () => seen.length === 1);

    expect(await forceCloseConnection(connectionName)).toBe(1);
    await waitUntil('the loss is noticed', () => logger.lines.some((l) => l.msg === 'lost the RabbitMQ connection'));
    await waitUntil('reconnected', () => conn.isConnected());
    expect(logger.lines.filter((l) => l.msg === 'connected to RabbitMQ')).toHaveLength(2);

    // A fresh confirm channel on the new connection, and the consumer is subscribed again.
    await publishConfirmed(await conn.confirmChannel(), names.eventsExchange, 'deposit.pending', Buffer.from('after'));
    await waitUntil('the second message arrives', () => seen.length === 2);
    expect(seen).toEqual(['before', 'after']);
  });

  it('close() stops consuming, lets the in-flight handler finish and ack, and leaves the rest queued', async () => {
    const { conn } = manager();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: string[] = [];
    const handled: string[] = [];
    conn.consume(
      names.deliverQueue,
      async (msg: ConsumeMessage) => {
        started.push(msg.content.toString());
        await gate;
        handled.push(msg.content.toString());
      },
      { prefetch: 1 },
    );
    conn.start();
    const channel = await conn.confirmChannel();
    for (const body of ['one', 'two', 'three']) await publishConfirmed(channel, names.eventsExchange, 'deposit.pending', Buffer.from(body));
    await waitUntil('one is in flight', () => started.length === 1);

    const closed = conn.close();
    setTimeout(release, 200);
    await closed;
    expect(started).toEqual(['one']);
    expect(handled).toEqual(['one']);
    expect(conn.isConnected()).toBe(false);
    // 'one' was acked before the connection closed; the other two are back in the queue, unlost.
    await sleep(300);
    expect((await admin.channel.checkQueue(names.deliverQueue)).messageCount).toBe(2);
  });
});
