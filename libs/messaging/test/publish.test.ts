import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import { publishConfirmed, UnroutableError, type Topology } from '../src';
import { deleteAll, openAdmin, uniquePrefix } from './support';

describe('publishConfirmed', () => {
  const prefix = uniquePrefix('publish');
  const queue = `${prefix}q`;
  const exchange = `${prefix}x`;
  const topology: Topology = {
    exchanges: [{ name: exchange, type: 'direct', options: { durable: false } }],
    queues: [{ name: queue, options: { durable: true } }],
    bindings: [],
  };
  let connection: ChannelModel;
  let admin: Channel;
  let confirm: ConfirmChannel;

  beforeAll(async () => {
    ({ connection, channel: admin } = await openAdmin());
    await admin.assertQueue(queue, { durable: true });
    await admin.assertExchange(exchange, 'direct', { durable: false });
    await admin.bindQueue(queue, exchange, 'k');
    confirm = await connection.createConfirmChannel();
  });

  beforeEach(async () => {
    await admin.purgeQueue(queue);
  });

  afterAll(async () => {
    await connection.close().catch(() => undefined);
    await deleteAll(topology);
  });

  it('resolves once the broker has confirmed: the message is already in its queue', async () => {
    await publishConfirmed(confirm, exchange, 'k', Buffer.from('raw'), { messageId: 'm-1', headers: { 'x-attempt': 2 } });
    expect((await admin.checkQueue(queue)).messageCount).toBe(1);
    const got = await admin.get(queue, { noAck: true });
    expect(got && got.content.toString()).toBe('raw');
    expect(got && got.properties).toMatchObject({ messageId: 'm-1', deliveryMode: 2, headers: { 'x-attempt': 2 } });
  });

  it('sends an object as JSON with its content type', async () => {
    await publishConfirmed(confirm, '', queue, { hello: 'world' });
    const got = await admin.get(queue, { noAck: true });
    expect(got && JSON.parse(got.content.toString())).toEqual({ hello: 'world' });
    expect(got && got.properties.contentType).toBe('application/json');
  });

  it('waits for the channel to drain when its write buffer is full, and still confirms every message', async () => {
    // A small write buffer (16 frames) makes back-pressure certain rather than load-dependent.
    const narrow = await connection.createConfirmChannel({ highWaterMark: 16 });
    let drains = 0;
    narrow.on('drain', () => drains++);
    let written = 0;
    const publish = narrow.publish.bind(narrow);
    narrow.publish = (...args: Parameters<typeof publish>) => (written++, publish(...args));
    const body = Buffer.alloc(16 * 1024, 1);
    const all = Promise.all(Array.from({ length: 300 }, (_, i) => publishConfirmed(narrow, '', queue, body, { messageId: `b-${i}` })));
    // Synchronously, only what fits before the buffer reported full was written; the rest waits.
    expect(written).toBeLessThan(30);
    await all;
    expect(written).toBe(300);
    expect(drains).toBeGreaterThan(0);
    expect((await admin.checkQueue(queue)).messageCount).toBe(300);
    await narrow.close();
  });

  it('rejects a mandatory message that no queue takes, instead of resolving on its confirm', async () => {
    await expect(publishConfirmed(confirm, exchange, 'nobody-bound', { x: 1 }, { mandatory: true })).rejects.toBeInstanceOf(
      UnroutableError,
    );
    await expect(publishConfirmed(confirm, exchange, 'k', { x: 2 }, { mandatory: true })).resolves.toBeUndefined();
    expect((await admin.checkQueue(queue)).messageCount).toBe(1);
  });

  it('rejects when the channel closes before the confirm (here: the exchange does not exist)', async () => {
    const own = await connection.createConfirmChannel();
    own.on('error', () => undefined);
    await expect(publishConfirmed(own, `${prefix}missing`, 'k', { x: 1 })).rejects.toThrow(/channel closed|NOT_FOUND/);
    // …and once closed, a publish rejects at once.
    await expect(publishConfirmed(own, exchange, 'k', { x: 1 })).rejects.toThrow(/closed/i);
  });
});
