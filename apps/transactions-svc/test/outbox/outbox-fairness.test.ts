/**
 * The relay shares each batch between the merchants with rows waiting (relay-batch.ts): one
 * merchant's backlog in the outbox (the largest rows the API admits, at its rate limit, outrun the
 * relay on a busy machine) never holds another merchant's new events behind it. Each merchant's
 * own rows still go out oldest first.
 */
import { MERCHANT_HEADER } from '@dw/messaging';
import { outboxLag } from '../../src/outbox/outbox-metrics';
import { startTestService, type TestService } from '../support/service';
import { deleteTopology, observeEvents, runRelay, uniquePrefix, waitUntil, type Observer } from './relay-support';

const prefix = uniquePrefix('fair');
const BATCH = 20;
let svc: TestService;
let observer: Observer;

beforeAll(async () => {
  svc = await startTestService('outbox-fairness');
  observer = await observeEvents(prefix);
});
afterAll(async () => {
  await observer?.close();
  await deleteTopology(prefix);
  await svc?.close();
});

const waiting = async () => Number((await svc.pool.query<{ n: string }>('SELECT count(*) AS n FROM outbox')).rows[0]!.n);

let n = 0;
async function deposit(merchant: string): Promise<string> {
  const res = await svc.as(merchant, { method: 'POST', url: '/api/createDeposit', payload: { amount: '1.00', currency: 'USD', orderId: `fair-${++n}` } });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

it("publishes another merchant's event in the first batch however long one merchant's backlog, each merchant's own in creation order", async () => {
  // With no relay running, A's backlog builds up in the outbox; then B creates one deposit.
  for (let i = 0; i < 10 * BATCH; i++) await deposit(svc.merchantA);
  await deposit(svc.merchantB);
  expect(await waiting()).toBe(10 * BATCH + 1);

  const relay = runRelay(prefix, svc.url, { batchSize: BATCH, pollIntervalMs: 60_000 });
  try {
    await waitUntil('every row published', async () => (await waiting()) === 0, 20_000);
    await waitUntil('every message observed', () => observer.messages.length >= 10 * BATCH + 1, 10_000);
    const merchants = observer.messages.map((m) => m.properties.headers?.[MERCHANT_HEADER] as string);
    // Taken by id alone, B's event would have been the last of 201, ten batches later.
    expect(merchants.indexOf(svc.merchantB)).toBeLessThan(BATCH);
    const aCreated = observer.messages
      .filter((m) => m.properties.headers?.[MERCHANT_HEADER] === svc.merchantA)
      .map((m) => JSON.parse(m.content.toString('utf8')).data.orderId as string);
    expect(aCreated).toEqual(Array.from({ length: 10 * BATCH }, (_, i) => `fair-${i + 1}`));
  } finally {
    await relay.stop();
  }
});

it('keeps outbox_lag_seconds current while a backlog keeps the relay draining, not only between drains', async () => {
  for (let i = 0; i < 200; i++) await deposit(svc.merchantA);
  await new Promise((r) => setTimeout(r, 300));
  outboxLag.set(0);
  // One row a batch: the drain lasts as many batches as there are rows.
  const relay = runRelay(prefix, svc.url, { batchSize: 1, pollIntervalMs: 50 });
  const seen: number[] = [];
  try {
    await relay.amqp.whenConnected(); // before it, the relay reads the lag every poll interval anyway
    await waitUntil('every row published', async () => {
      const left = await waiting();
      if (left > 20) seen.push((await outboxLag.get()).values[0]?.value ?? 0);
      return left === 0;
    }, 30_000);
    // Read afresh during the drain, every poll interval (frozen, it kept the value read before the
    // drain began: one value for the whole drain).
    expect(new Set(seen).size).toBeGreaterThanOrEqual(4);
    expect(Math.max(...seen)).toBeGreaterThanOrEqual(0.3); // the oldest row was at least 0.3 s old throughout
  } finally {
    await relay.stop();
  }
});
