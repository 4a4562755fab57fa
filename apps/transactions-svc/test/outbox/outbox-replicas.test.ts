import pg from 'pg';
import { startTestService, type TestService } from '../support/service';
import { createDeposit, deleteTopology, observeEvents, runRelay, sleep, uniquePrefix, waitUntil, type Observer } from './relay-support';

const prefix = uniquePrefix('replicas');
let svc: TestService;
let observer: Observer;

beforeAll(async () => {
  svc = await startTestService('outbox-replicas');
  observer = await observeEvents(prefix);
});

afterAll(async () => {
  await observer?.close();
  await deleteTopology(prefix);
  await svc?.close();
});

async function pendingEventIds(): Promise<string[]> {
  const rows = await svc.db.$queryRaw<{ event_id: string }[]>`SELECT event_id FROM outbox ORDER BY id`;
  return rows.map((r) => r.event_id);
}

const timesArrived = (eventId: string) => observer.messages.filter((m) => m.properties.messageId === eventId).length;

describe('outbox relay: several replicas', () => {
  it('skips rows another relay holds, and publishes them once that relay lets go', async () => {
    for (let i = 0; i < 10; i++) await createDeposit(svc); // no relay runs yet: all pending
    const pending = await pendingEventIds();
    expect(pending).toHaveLength(10);

    // Another replica mid-batch: it holds the five oldest rows.
    const other = new pg.Client({ connectionString: svc.url });
    await other.connect();
    await other.query('BEGIN');
    await other.query('SELECT id FROM outbox ORDER BY id LIMIT 5 FOR UPDATE');
    const relay = runRelay(prefix, svc.url, { batchSize: 3 });
    try {
      await observer.waitForIds(pending.slice(5));
      await sleep(300);
      expect(pending.slice(0, 5).map(timesArrived)).toEqual([0, 0, 0, 0, 0]);

      await other.query('ROLLBACK'); // it crashed before publishing: the rows are up for grabs
      await observer.waitForIds(pending.slice(0, 5), 3000); // the next poll (1 s) finds them
      expect(pending.map(timesArrived)).toEqual(Array(10).fill(1));
    } finally {
      await relay.stop();
      await other.end();
    }
  });

  it('two relays on one database publish each of 200 rows, without duplicates in the normal case', async () => {
    const a = runRelay(prefix, svc.url, { batchSize: 10 });
    const b = runRelay(prefix, svc.url, { batchSize: 10 });
    try {
      await Promise.all([a.amqp.whenConnected(), b.amqp.whenConnected()]);
      const ids: string[] = [];
      for (let round = 0; round < 10; round++) {
        ids.push(...(await Promise.all(Array.from({ length: 20 }, () => createDeposit(svc)))));
      }
      const rows = await svc.db.$queryRaw<{ event_id: string }[]>`
        SELECT e.id AS event_id FROM transaction_events e WHERE e.transaction_id = ANY(${ids}::uuid[])`;
      const eventIds = rows.map((r) => r.event_id);
      expect(new Set(eventIds).size).toBe(200);

      await observer.waitForIds(eventIds, 15_000);
      await waitUntil('every row deleted', async () => (await pendingEventIds()).length === 0, 5000);
      await sleep(500); // room for a late duplicate to show up
      expect(eventIds.filter((id) => timesArrived(id) !== 1)).toEqual([]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
