import { startTcpProxy, type TcpProxy } from '@dw/testing';
import { startTestService, type TestService } from '../support/service';
import {
  createDeposit,
  deleteTopology,
  observeEvents,
  eventsOf,
  runRelay,
  sleep,
  uniquePrefix,
  unpublishedCount,
  waitUntil,
  type Observer,
} from './relay-support';

const prefix = uniquePrefix('outage');
let svc: TestService;
let observer: Observer;
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  svc = await startTestService('outbox-outage');
  observer = await observeEvents(prefix);
});

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await observer?.close();
  await deleteTopology(prefix);
  await svc?.close();
});

async function proxy(port: number): Promise<TcpProxy> {
  const p = await startTcpProxy('127.0.0.1', port);
  proxies.push(p);
  return p;
}

async function eventIdsOf(transactionIds: string[]): Promise<string[]> {
  const rows = await Promise.all(transactionIds.map((id) => eventsOf(svc, id)));
  return rows.flat().map((r) => r.event_id);
}

const pendingCount = (eventIds: string[]) => unpublishedCount(svc, eventIds);

const arrived = (eventIds: string[]) => observer.messages.filter((m) => eventIds.includes(m.properties.messageId as string));

describe('outbox relay: RabbitMQ outage', () => {
  it('keeps rows while RabbitMQ is unreachable and publishes all of them once it is back, without a restart', async () => {
    const amqpProxy = await proxy(5672);
    const relay = runRelay(prefix, svc.url, { amqpUrl: `amqp://guest:guest@${amqpProxy.address}` });
    try {
      await relay.amqp.whenConnected();
      const before = await eventIdsOf([await createDeposit(svc)]);
      await observer.waitForIds(before);

      amqpProxy.cut();
      await waitUntil('the relay to notice', () => !relay.amqp.isConnected());
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await createDeposit(svc)); // throws unless 201
      const during = await eventIdsOf(ids);
      expect(during).toHaveLength(20);
      await sleep(1500);
      expect(arrived(during)).toEqual([]);
      expect(await pendingCount(during)).toBe(20);

      amqpProxy.restore();
      await observer.waitForIds(during, 15_000);
      await waitUntil('every row deleted', async () => (await pendingCount(during)) === 0, 5000);
    } finally {
      await relay.stop();
    }
  });

  it('stops promptly while RabbitMQ is unreachable', async () => {
    const amqpProxy = await proxy(5672);
    amqpProxy.cut();
    const relay = runRelay(prefix, svc.url, { amqpUrl: `amqp://guest:guest@${amqpProxy.address}` });
    await sleep(300);
    const started = Date.now();
    await relay.stop();
    expect(Date.now() - started).toBeLessThan(3000); // prompt, not instant: a hang would take the poll interval or more
  });
});

describe('outbox relay: PostgreSQL outage', () => {
  it('survives losing its sessions and publishes what was written meanwhile', async () => {
    const pgProxy = await proxy(5432);
    const viaProxy = svc.url.replace(/127\.0\.0\.1:5432/, pgProxy.address);
    expect(viaProxy).not.toBe(svc.url);
    // No poll within the test's time: only the retry loop and the in-process wake-up bring rows.
    const relay = runRelay(prefix, viaProxy, { pollIntervalMs: 60_000 });
    try {
      await relay.amqp.whenConnected();
      await observer.waitForIds(await eventIdsOf([await createDeposit(svc)]));

      pgProxy.cut(); // the service itself still reaches PostgreSQL directly: creates keep working
      const during = await eventIdsOf(await Promise.all([1, 2, 3, 4, 5].map(() => createDeposit(svc))));
      await sleep(1000);
      expect(arrived(during)).toEqual([]);

      pgProxy.restore();
      await observer.waitForIds(during, 15_000);
      await waitUntil('every row deleted', async () => (await pendingCount(during)) === 0, 5000);

      // Back to normal: a new row arrives at once, long before the 60 s poll.
      const started = Date.now();
      await observer.waitForIds(await eventIdsOf([await createDeposit(svc)]), 1000);
      expect(Date.now() - started).toBeLessThan(5000); // well under the 60 s poll: the commit woke it
    } finally {
      await relay.stop();
    }
  });
});
