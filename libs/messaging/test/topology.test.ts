import type { Channel, ChannelModel } from 'amqplib';
import { ATTEMPT_HEADER, assertTopology, attemptOf, callbackTopology, DEAD_LETTER_WORKER_SETTLE_MS, deleteTopology, MANUAL_ROUTING_PREFIX, messagingNames } from '../src';
import { collect, deleteAll, openAdmin, uniquePrefix, waitUntil } from './support';

describe('messagingNames', () => {
  it('prefixes every name and derives each retry queue name from its delay', () => {
    const n = messagingNames('staging.');
    expect(n).toMatchObject({
      eventsExchange: 'staging.tx.events',
      deliverQueue: 'staging.callbacks.deliver',
      deadLetterExchange: 'staging.callbacks.dlx',
      tokenExchange: 'staging.merchant.tokens',
    });
    expect(n.retryQueue(5000)).toBe('staging.callbacks.retry.5s');
    expect(n.retryQueue(80_000)).toBe('staging.callbacks.retry.80s');
    expect(n.retryQueue(1500)).toBe('staging.callbacks.retry.1500ms');
    expect(() => n.retryQueue(0)).toThrow(RangeError);
  });
});

describe('callbackTopology', () => {
  it('has one quorum retry queue per distinct delay with a single TTL dead-lettering to the delivery queue', () => {
    const t = callbackTopology({ prefix: 'p.', retryDelaysMs: [5000, 10_000, 5000] });
    const retry = t.queues.filter((q) => q.name.startsWith('p.callbacks.retry.'));
    expect(retry.map((q) => q.name)).toEqual(['p.callbacks.retry.5s', 'p.callbacks.retry.10s']);
    expect(retry[1]!.options).toEqual({
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': 10_000,
        'x-dead-letter-exchange': 'p.callbacks.dlx',
        'x-dead-letter-routing-key': 'p.callbacks.deliver',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    expect(t.bindings).toContainEqual({ queue: 'p.callbacks.deliver', exchange: 'p.tx.events', routingKey: '*.*' });
  });

  it('has a manual lane with its own queue, retry and throttle queues, each wait dead-lettering back to the manual queue', () => {
    const t = callbackTopology({ prefix: 'p.', retryDelaysMs: [5000, 10_000], deliveryLimit: 7 });
    const manual = t.queues.filter((q) => q.name.startsWith('p.callbacks.manual'));
    expect(manual.map((q) => q.name)).toEqual([
      'p.callbacks.manual',
      'p.callbacks.manual.retry.5s',
      'p.callbacks.manual.retry.10s',
      'p.callbacks.manual.throttle.1s',
      'p.callbacks.manual.throttle.5s',
      'p.callbacks.manual.throttle.15s',
      'p.callbacks.manual.throttle.30s',
    ]);
    expect(manual[0]!.options.arguments).toMatchObject({ 'x-delivery-limit': 7, 'x-dead-letter-routing-key': 'p.callbacks.parked' });
    for (const wait of manual.slice(1)) expect(wait.options.arguments).toMatchObject({ 'x-dead-letter-routing-key': 'p.callbacks.manual' });
    expect(t.bindings).toContainEqual({ queue: 'p.callbacks.manual', exchange: 'p.tx.events', routingKey: 'manual.#' });
    expect(t.bindings).toContainEqual({ queue: 'p.callbacks.manual', exchange: 'p.callbacks.dlx', routingKey: 'p.callbacks.manual' });
    expect(t.unbindings).toEqual([{ queue: 'p.callbacks.deliver', exchange: 'p.tx.events', routingKey: '#' }]);
  });

  it('gives the delivery queue an explicit delivery limit that parks, never drops, a message handed back too often', () => {
    const t = callbackTopology({ prefix: 'p.', retryDelaysMs: [5000], deliveryLimit: 7 });
    expect(t.queues.find((q) => q.name === 'p.callbacks.deliver')!.options.arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 7,
      'x-dead-letter-exchange': 'p.callbacks.dlx',
      'x-dead-letter-routing-key': 'p.callbacks.parked',
      'x-dead-letter-strategy': 'at-least-once',
    });
    expect(t.queues.map((q) => q.name)).toContain('p.callbacks.parked');
    expect(t.bindings).toContainEqual({ queue: 'p.callbacks.parked', exchange: 'p.callbacks.dlx', routingKey: 'p.callbacks.parked' });
    expect(callbackTopology({ prefix: 'p.', retryDelaysMs: [5000] }).queues[0]!.options.arguments!['x-delivery-limit']).toBe(20);
  });

  it('has one throttle queue per throttle delay, shaped like the retry queues, so a held-back message waits in RabbitMQ', () => {
    const t = callbackTopology({ prefix: 'p.', retryDelaysMs: [5000] });
    const throttle = t.queues.filter((q) => q.name.startsWith('p.callbacks.throttle.'));
    expect(throttle.map((q) => q.name)).toEqual(['p.callbacks.throttle.1s', 'p.callbacks.throttle.5s', 'p.callbacks.throttle.15s', 'p.callbacks.throttle.30s']);
    expect(throttle[0]!.options.arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-message-ttl': 1000,
      'x-dead-letter-exchange': 'p.callbacks.dlx',
      'x-dead-letter-routing-key': 'p.callbacks.deliver',
      'x-dead-letter-strategy': 'at-least-once',
    });
  });
});

describe('assertTopology on the broker', () => {
  const prefix = uniquePrefix('topology');
  const names = messagingNames(prefix);
  const topology = callbackTopology({ prefix, retryDelaysMs: [200, 400, 1500] });
  let connection: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    ({ connection, channel } = await openAdmin());
    await assertTopology(channel, topology);
  });

  afterAll(async () => {
    await connection.close();
    await deleteAll(topology);
  });

  it('declares every queue and exchange, and declaring again changes nothing', async () => {
    await assertTopology(channel, topology);
    for (const q of topology.queues) await expect(channel.checkQueue(q.name)).resolves.toMatchObject({ messageCount: 0 });
    for (const e of topology.exchanges) await expect(channel.checkExchange(e.name)).resolves.toBeDefined();
  });

  it('refuses to redeclare a queue with other arguments (PRECONDITION_FAILED), which is why names carry the delay', async () => {
    const { connection: other, channel: ch } = await openAdmin();
    try {
      const changed = { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 999 } };
      await expect(ch.assertQueue(names.retryQueue(200), changed)).rejects.toThrow(/PRECONDITION_FAILED/);
    } finally {
      await other.close().catch(() => undefined);
    }
  });

  it('routes an event published to tx.events by its type into the delivery queue, and a manual.* one into the manual queue only', async () => {
    const deliver = await collect(channel, names.deliverQueue);
    const manual = await collect(channel, names.manualQueue);
    try {
      channel.publish(names.eventsExchange, 'withdraw.failed', Buffer.from('event'));
      channel.publish(names.eventsExchange, `${MANUAL_ROUTING_PREFIX}deposit.completed`, Buffer.from('recovered'));
      await waitUntil('both are delivered', () => deliver.messages.length === 1 && manual.messages.length === 1, 5000);
      await new Promise((r) => setTimeout(r, 200));
      expect(deliver.messages.map((m) => m.msg.fields.routingKey)).toEqual(['withdraw.failed']);
      expect(manual.messages.map((m) => m.msg.fields.routingKey)).toEqual(['manual.deposit.completed']);
    } finally {
      await channel.cancel(deliver.tag);
      await channel.cancel(manual.tag);
    }
  });

  it('removes the catch-all binding an earlier version gave the delivery queue, so manual messages are not delivered twice', async () => {
    await channel.bindQueue(names.deliverQueue, names.eventsExchange, '#');
    await assertTopology(channel, topology);
    const deliver = await collect(channel, names.deliverQueue);
    const manual = await collect(channel, names.manualQueue);
    try {
      channel.publish(names.eventsExchange, `${MANUAL_ROUTING_PREFIX}withdraw.pending`, Buffer.from('recovered'));
      await waitUntil('the manual queue has it', () => manual.messages.length === 1, 5000);
      await new Promise((r) => setTimeout(r, 300));
      expect(deliver.messages).toHaveLength(0);
    } finally {
      await channel.cancel(deliver.tag);
      await channel.cancel(manual.tag);
    }
  });

  it('dead-letters a manual retry back into the manual queue, not the delivery queue', async () => {
    const deliver = await collect(channel, names.deliverQueue);
    const manual = await collect(channel, names.manualQueue);
    try {
      channel.sendToQueue(names.lane('manual').retryQueue(200), Buffer.from('manual retry'), { headers: { [ATTEMPT_HEADER]: 8 } });
      channel.sendToQueue(names.lane('manual').throttleQueue(1000), Buffer.from('manual throttled'));
      await waitUntil('both come back', () => manual.messages.length === 2, 5000);
      expect(manual.messages.map((m) => m.msg.content.toString())).toEqual(['manual retry', 'manual throttled']);
      expect(manual.messages[0]!.msg.properties.headers?.[ATTEMPT_HEADER]).toBe(8);
      expect(deliver.messages).toHaveLength(0);
    } finally {
      await channel.cancel(deliver.tag);
      await channel.cancel(manual.tag);
    }
  });

  describe('a message in a retry queue', () => {
    it('dead-letters back into the delivery queue after its queue TTL, keeping the attempt header', async () => {
      const { messages, tag } = await collect(channel, names.deliverQueue);
      try {
        const sentAt = Date.now();
        channel.sendToQueue(names.retryQueue(400), Buffer.from('retry me'), { headers: { [ATTEMPT_HEADER]: 3 } });
        await waitUntil('the retry comes back', () => messages.length === 1, 5000);
        const waited = messages[0]!.at - sentAt;
        expect(waited).toBeGreaterThanOrEqual(380);
        expect(waited).toBeLessThan(2000);
        const back = messages[0]!.msg;
        expect(back.content.toString()).toBe('retry me');
        expect(back.properties.headers?.[ATTEMPT_HEADER]).toBe(3);
        expect(attemptOf(back)).toBe(3);
      } finally {
        await channel.cancel(tag);
      }
    });

    it('is not held behind a longer wait in another retry queue (no head-of-line blocking)', async () => {
      const { messages, tag } = await collect(channel, names.deliverQueue);
      try {
        const sentAt = Date.now();
        channel.sendToQueue(names.retryQueue(1500), Buffer.from('slow'));
        channel.sendToQueue(names.retryQueue(200), Buffer.from('fast'));
        await waitUntil('both come back', () => messages.length === 2, 5000);
        expect(messages.map((m) => m.msg.content.toString())).toEqual(['fast', 'slow']);
        expect(messages[0]!.at - sentAt).toBeLessThan(1400);
        expect(messages[1]!.at - sentAt).toBeGreaterThanOrEqual(1480);
      } finally {
        await channel.cancel(tag);
      }
    });
  });
});

describe('deleteTopology', () => {
  // Each case waits a few hundred milliseconds before deleting, so that even a broken guard never
  // deletes a queue within the milliseconds its dead-letter worker needs (the crash it prevents).
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const exists = async (queue: string) => {
    const { connection, channel } = await openAdmin();
    channel.on('error', () => undefined);
    try {
      await channel.checkQueue(queue);
      return true;
    } catch {
      return false;
    } finally {
      await connection.close().catch(() => undefined);
    }
  };

  it(`lets a queue with a dead-letter worker live ${DEAD_LETTER_WORKER_SETTLE_MS} ms after this process declared it, then deletes everything`, async () => {
    const topology = callbackTopology({ prefix: uniquePrefix('settle'), retryDelaysMs: [1000] });
    const withWorker = topology.queues.find((q) => q.options.arguments?.['x-dead-letter-strategy'] === 'at-least-once')!.name;
    const { connection, channel } = await openAdmin();
    try {
      const declaredAt = Date.now();
      await assertTopology(channel, topology);
      await sleep(300);
      const deleting = deleteTopology(channel, topology);
      await sleep(DEAD_LETTER_WORKER_SETTLE_MS - 500);
      expect(await exists(withWorker)).toBe(true);
      await deleting;
      expect(Date.now() - declaredAt).toBeGreaterThanOrEqual(DEAD_LETTER_WORKER_SETTLE_MS);
      for (const q of topology.queues) expect(await exists(q.name)).toBe(false);
    } finally {
      await connection.close();
    }
  });

  it('deletes at once what this process declared longer ago than that', async () => {
    const topology = callbackTopology({ prefix: uniquePrefix('settled'), retryDelaysMs: [1000] });
    const { connection, channel } = await openAdmin();
    try {
      await assertTopology(channel, topology);
      await sleep(DEAD_LETTER_WORKER_SETTLE_MS + 100);
      const started = Date.now();
      await deleteTopology(channel, topology);
      expect(Date.now() - started).toBeLessThan(DEAD_LETTER_WORKER_SETTLE_MS / 2);
      for (const q of topology.queues) expect(await exists(q.name)).toBe(false);
    } finally {
      await connection.close();
    }
  });

  it('gives a queue that another process declared the whole wait, counted from the call (the broker cannot tell its age)', async () => {
    const topology = callbackTopology({ prefix: uniquePrefix('foreign'), retryDelaysMs: [1000] });
    const { connection, channel } = await openAdmin();
    try {
      // Declared by hand, not through assertTopology: as another process's declaration looks here.
      for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, e.options);
      for (const q of topology.queues) await channel.assertQueue(q.name, q.options);
      await sleep(300);
      const started = Date.now();
      await deleteTopology(channel, topology);
      expect(Date.now() - started).toBeGreaterThanOrEqual(DEAD_LETTER_WORKER_SETTLE_MS - 5);
      for (const q of topology.queues) expect(await exists(q.name)).toBe(false);
    } finally {
      await connection.close();
    }
  });
});
