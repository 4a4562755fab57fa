/**
 * GET /api/endpoint-health (behind /ui/endpointHealth): per callback URL, the deliveries of the
 * events created in the last 24 h. Attempts are written here as callback-svc writes them.
 */
import { HEALTH_MAX_EVENTS } from '@dw/contracts';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('endpoint_health', { allowPrivateHosts: true });
});
afterAll(async () => svc?.close());

let n = 0;
async function create(merchant: string, type: 'deposit' | 'withdraw') {
  const url = type === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw';
  const payload: Record<string, string> = { amount: '1.00', currency: 'USD', orderId: `h-${++n}` };
  if (type === 'withdraw') payload.destination = 'acct';
  const tx = (await svc.as(merchant, { method: 'POST', url, payload })).json();
  const [event] = await svc.db.$queryRaw<{ id: string }[]>`SELECT id FROM transaction_events WHERE transaction_id = ${tx.id}::uuid`;
  return event!.id;
}

/** Records attempts (status code or error, seconds ago) and the delivery's resulting status. */
async function deliver(eventId: string, status: string, attempts: [statusCode: number | null, error: string | null, secondsAgo: number][]) {
  for (const [i, [code, error, ago]] of attempts.entries()) {
    await svc.db.$executeRaw`
      INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, error, duration_ms)
      VALUES (${eventId}, ${i + 1}, now() - make_interval(secs => ${ago}), 'https://example.com/cb', ${code}, ${error}, 5)`;
  }
  await svc.db.$executeRaw`
    UPDATE callback_deliveries SET status = ${status}::delivery_status, attempt_count = ${attempts.length} WHERE event_id = ${eventId}`;
}

const health = async (merchant = svc.merchantA) => {
  const res = await svc.as(merchant, { method: 'GET', url: '/api/endpoint-health' });
  expect(res.statusCode).toBe(200);
  return res.json();
};

describe('GET /api/endpoint-health', () => {
  it('reports both callback URLs with zero deliveries when nothing happened', async () => {
    const body = await health(svc.merchantB);
    expect(body.windowHours).toBe(24);
    expect(body.endpoints.map((e: { type: string }) => e.type)).toEqual(['deposit', 'withdraw']);
    for (const e of body.endpoints) {
      expect(e).toMatchObject({ url: null, deliveries: 0, succeeded: 0, failed: 0, retrying: 0, successRate: null, lastSuccessAt: null, lastFailure: null });
    }
  });

  it('counts deliveries by outcome, the success rate, the last success and the last failure with its error (a 200 cut short is a failure)', async () => {
    await svc.as(svc.merchantA, { method: 'PUT', url: '/api/updateCallbackUrlDeposit', payload: { url: 'http://127.0.0.1:9/cb' } });
    const ok1 = await create(svc.merchantA, 'deposit');
    const ok2 = await create(svc.merchantA, 'deposit');
    const ok3 = await create(svc.merchantA, 'deposit');
    const dead = await create(svc.merchantA, 'deposit');
    const retrying = await create(svc.merchantA, 'deposit');
    await create(svc.merchantA, 'deposit'); // still pending
    const withdrawSkipped = await create(svc.merchantA, 'withdraw');
    await deliver(ok1, 'succeeded', [[200, null, 300]]);
    await deliver(ok2, 'succeeded', [[500, null, 200], [200, null, 100]]);
    await deliver(ok3, 'succeeded', [[200, null, 50]]);
    // The last failure is a 200 whose body did not arrive within the timeout: a failure, not a success.
    const bodyTimeout = 'timeout: the reply body did not complete within 15000 ms';
    await deliver(dead, 'failed', [[503, null, 400], [null, 'connect ECONNREFUSED 10.0.0.1:443', 300], [200, bodyTimeout, 40]]);
    await deliver(retrying, 'retrying', [[404, null, 60]]);
    await deliver(withdrawSkipped, 'skipped', []);

    const [deposit, withdraw] = (await health()).endpoints;
    expect(deposit).toMatchObject({
      type: 'deposit',
      url: 'http://127.0.0.1:9/cb',
      deliveries: 6,
      succeeded: 3,
      failed: 1,
      retrying: 1,
      pending: 1,
      skipped: 0,
      successRate: 0.75,
      lastFailure: { statusCode: 200, error: bodyTimeout },
    });
    const ago = (iso: string) => (Date.now() - Date.parse(iso)) / 1000;
    expect(ago(deposit.lastSuccessAt)).toBeGreaterThan(40);
    expect(ago(deposit.lastSuccessAt)).toBeLessThan(60);
    expect(ago(deposit.lastFailure.at)).toBeGreaterThan(30);
    expect(ago(deposit.lastFailure.at)).toBeLessThan(50);
    expect(withdraw).toMatchObject({ type: 'withdraw', url: null, deliveries: 1, skipped: 1, successRate: null, lastFailure: null });
  });

  it('dates the last success when its 200 arrived: a reply that took 14.5 s is 14.5 s after the attempt began', async () => {
    const slow = await create(svc.merchantA, 'withdraw');
    await svc.db.$executeRaw`
      INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, error, duration_ms)
      VALUES (${slow}, 1, now() - interval '100 seconds', 'https://example.com/cb', 200, NULL, 14507)`;
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded', attempt_count = 1 WHERE event_id = ${slow}`;
    const withdraw = (await health()).endpoints[1];
    const [attempt] = await svc.db.$queryRaw<{ at: Date }[]>`SELECT at FROM callback_attempts WHERE event_id = ${slow}`;
    expect(Date.parse(withdraw.lastSuccessAt) - attempt!.at.getTime()).toBe(14507);
  });

  it('leaves out events created more than 24 hours ago', async () => {
    const before = (await health()).endpoints[0];
    const old = await create(svc.merchantA, 'deposit');
    await deliver(old, 'failed', [[500, null, 10]]);
    await svc.db.$executeRaw`UPDATE transaction_events SET created_at = now() - interval '25 hours' WHERE id = ${old}`;
    const after = (await health()).endpoints[0];
    expect(after.deliveries).toBe(before.deliveries);
    expect(after.failed).toBe(before.failed);
    expect(after.lastFailure).toEqual(before.lastFailure);
  });

  it("shows none of another merchant's deliveries", async () => {
    const body = await health(svc.merchantB);
    expect(body.endpoints.every((e: { deliveries: number }) => e.deliveries === 0)).toBe(true);
  });

  it(`counts at most the newest ${HEALTH_MAX_EVENTS} events of the window, and says where the count starts`, async () => {
    // HEALTH_MAX_EVENTS + 5 succeeded deposits of merchant B, one a second, the newest a minute ago.
    await svc.db.$executeRawUnsafe(
      `WITH t AS (
         INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
         SELECT gen_random_uuid(), $1::uuid, 'deposit', 'completed', 1, 'USD', 'cap-' || g, 1,
                now() - interval '1 minute' - g * interval '1 second', now()
           FROM generate_series(0, $2::int - 1) g
         RETURNING id, created_at),
       e AS (
         INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
         SELECT 'evt_' || md5(t.id::text), t.id, $1::uuid, 1, 'deposit.pending', 'pending', '{}', t.created_at FROM t
         RETURNING id)
       INSERT INTO callback_deliveries (event_id, status, attempt_count) SELECT id, 'succeeded', 1 FROM e`,
      svc.merchantB,
      HEALTH_MAX_EVENTS + 5,
    );
    const body = await health(svc.merchantB);
    expect(body.endpoints[0]).toMatchObject({ type: 'deposit', deliveries: HEALTH_MAX_EVENTS, succeeded: HEALTH_MAX_EVENTS });
    const [row] = await svc.db.$queryRawUnsafe<{ oldest: Date }[]>(
      `SELECT created_at AS oldest FROM transaction_events WHERE merchant_id = $1::uuid ORDER BY created_at DESC OFFSET $2 LIMIT 1`,
      svc.merchantB,
      HEALTH_MAX_EVENTS - 1,
    );
    expect(body.since).toBe(row!.oldest.toISOString());
    expect(body.windowHours).toBe(24);
  });

  it('finds the window through the (merchant_id, created_at) index, not a scan of every event', async () => {
    const plan = await svc.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off'); // a tiny table would otherwise be scanned whatever the indexes
      return tx.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
        `EXPLAIN SELECT 1 FROM transaction_events e WHERE e.merchant_id = $1::uuid AND e.created_at >= now() - interval '24 hours'`,
        svc.merchantA,
      );
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('transaction_events_merchant_id_created_at_idx');
  });
});
