import { callbackBody } from '@dw/contracts';
import { MERCHANT_HEADER, messagingNames } from '@dw/messaging';
import { withSpan } from '@dw/telemetry';
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service';
import {
  createDeposit,
  deleteTopology,
  observeEvents,
  eventsOf,
  unpublishedCount,
  runRelay,
  uniquePrefix,
  waitUntil,
  type Observer,
  type RunningRelay,
} from './relay-support';
import { installTestTracing } from '@dw/testing';
import { ringOutboxDoorbell } from '../../src/outbox/doorbell';

const tracing = installTestTracing();
const prefix = uniquePrefix('relay');
let svc: TestService;
let observer: Observer;
let relay: RunningRelay;

beforeAll(async () => {
  svc = await startTestService('outbox-relay');
  observer = await observeEvents(prefix);
  // A poll far beyond any wait below: what arrives in time was woken in process after the commit.
  relay = runRelay(prefix, svc.url, { pollIntervalMs: 60_000 });
  await relay.amqp.whenConnected();
});

afterAll(async () => {
  await relay?.stop();
  await observer?.close();
  await deleteTopology(prefix);
  await svc?.close();
  await tracing.uninstall();
});

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('outbox relay: publishing', () => {
  it('publishes a created deposit within a second: routing key, message id, merchant, body, trace, then deletes the row', async () => {
    const started = Date.now();
    const id = await withSpan('merchant request', {}, () => createDeposit(svc));
    const [row] = await eventsOf(svc, id);
    const [message] = await observer.waitForIds([row!.event_id], 1000);
    expect(Date.now() - started).toBeLessThan(5000); // well under the 60 s poll: the commit woke it

    expect(message!.fields.exchange).toBe(messagingNames(prefix).eventsExchange);
    expect(message!.fields.routingKey).toBe('deposit.pending');
    expect(message!.properties.messageId).toBe(row!.event_id);
    expect(message!.properties.contentType).toBe('application/json');
    expect(message!.properties.deliveryMode).toBe(2);
    expect(message!.properties.headers![MERCHANT_HEADER]).toBe(row!.merchant_id);
    expect(message!.content.toString('utf8')).toBe(callbackBody(row!.payload));
    expect(JSON.parse(message!.content.toString('utf8'))).toMatchObject({ id: row!.event_id, type: 'deposit.pending', sequence: 1, data: { id } });

    // Same trace as the request that wrote the row, one hop further: the relay's publish span.
    const [, rowTrace, rowSpan] = TRACEPARENT.exec(row!.traceparent!)!;
    const [, msgTrace, msgSpan] = TRACEPARENT.exec(String(message!.properties.headers!.traceparent))!;
    expect(msgTrace).toBe(rowTrace);
    expect(msgSpan).not.toBe(rowSpan);
    // The row is deleted after the confirm, so by then the publish span has ended (a consumer can
    // see the message before the relay's confirm arrives).
    await waitUntil('the outbox row deleted', async () => (await unpublishedCount(svc, [row!.event_id])) === 0, 5000);
    const publish = tracing.exporter.getFinishedSpans().find((s) => s.spanContext().spanId === msgSpan)!;
    expect(publish.name).toBe(`publish ${messagingNames(prefix).eventsExchange}`);
    expect(publish.parentSpanContext?.spanId).toBe(rowSpan);

  });

  it('starts a trace of its own for a row written outside any trace', async () => {
    const id = await createDeposit(svc);
    const [row] = await eventsOf(svc, id);
    expect(row!.traceparent).toBeNull();
    const [message] = await observer.waitForIds([row!.event_id]);
    expect(String(message!.properties.headers!.traceparent)).toMatch(TRACEPARENT);
  });

  it('publishes the events of one transaction in sequence order', async () => {
    const ids = await Promise.all([1, 2, 3, 4, 5].map(() => createDeposit(svc)));
    // Each transaction moves twice more at once, so the relay meets its events together in a batch.
    await Promise.all(ids.map(async (id) => {
      for (const status of ['processing', 'completed']) {
        const res = await svc.app.inject({
          method: 'POST',
          url: `/internal/transactions/${id}/status`,
          headers: { 'x-admin-token': ADMIN_TOKEN },
          payload: { status },
        });
        expect(res.statusCode).toBe(200);
      }
    }));
    for (const id of ids) {
      const rows = await eventsOf(svc, id);
      expect(rows.map((r) => r.routing_key)).toEqual(['deposit.pending', 'deposit.processing', 'deposit.completed']);
      const arrived = await observer.waitForIds(rows.map((r) => r.event_id));
      expect(arrived.map((m) => JSON.parse(m.content.toString('utf8')).sequence)).toEqual([1, 2, 3]);
      expect(arrived.map((m) => m.fields.routingKey)).toEqual(['deposit.pending', 'deposit.processing', 'deposit.completed']);
    }
  });

  it('publishes a recovery’s manual_outbox rows with their manual.* keys, and holds a deposit created after them back by a batch at most', async () => {
    const [source] = await eventsOf(svc, await createDeposit(svc));
    const startAt = observer.messages.length;
    await svc.db.$executeRaw`
      INSERT INTO manual_outbox (event_id, routing_key, payload)
      SELECT 'evt_recovered_' || g, 'manual.deposit.pending', ${JSON.stringify(source!.payload)}::jsonb FROM generate_series(1, 1000) g`;
    ringOutboxDoorbell('manual_outbox');
    const id = await createDeposit(svc);
    const [row] = await eventsOf(svc, id);
    const recovered = Array.from({ length: 1000 }, (_, i) => `evt_recovered_${i + 1}`);
    await observer.waitForIds([...recovered, row!.event_id], 20_000);

    const arrived = observer.messages.slice(startAt).map((m) => m.properties.messageId as string);
    const manual = observer.messages.slice(startAt).filter((m) => (m.properties.messageId as string).startsWith('evt_recovered_'));
    expect(manual.map((m) => m.fields.routingKey)).toEqual(recovered.map(() => 'manual.deposit.pending'));
    expect(manual.map((m) => m.properties.messageId)).toEqual(recovered); // in the order they were written
    // Batches of 100 from each table in turn: the deposit waited for the batch under way, not the 1,000.
    expect(arrived.indexOf(row!.event_id)).toBeLessThanOrEqual(200);
    // Deleted once confirmed: the last batch's DELETE commits just after its messages arrive here.
    const left = async () => Number((await svc.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM manual_outbox`)[0]!.n);
    await waitUntil('the manual outbox is empty', async () => (await left()) === 0, 5000);
    expect(await left()).toBe(0);
  });

  it('stops promptly, closing its PostgreSQL sessions', async () => {
    const relaySessions = async () => {
      const [row] = await svc.db.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'dw-outbox-%'`;
      return Number(row!.n);
    };
    const before = await relaySessions();
    const other = runRelay(prefix, svc.url);
    await other.amqp.whenConnected();
    await waitUntil('its pass session', async () => (await relaySessions()) >= before + 1);
    const started = Date.now();
    await other.stop();
    expect(Date.now() - started).toBeLessThan(3000); // prompt, not instant: a hang would take the poll interval or more
    await waitUntil('its sessions gone', async () => (await relaySessions()) === before, 2000);
  });
});
