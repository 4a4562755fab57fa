/**
 * POST /api/redeliverCallback and POST /api/recoverCallbacks (docs/api.md#redelivery-and-recovery). No relay runs here, so
 * the outbox rows a call queues stay in the table to be read; delivery outcomes are written as
 * callback-svc writes them.
 */
import { RECOVERY_MAX_EVENTS } from '@dw/contracts';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('redeliver');
});
afterAll(async () => svc?.close());

let n = 0;
/** Creates a transaction; returns its pending event's id. */
async function create(merchant: string, type: 'deposit' | 'withdraw' = 'deposit'): Promise<string> {
  const url = type === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw';
  const payload: Record<string, string> = { amount: '1.00', currency: 'USD', orderId: `r-${++n}` };
  if (type === 'withdraw') payload.destination = 'acct';
  const res = await svc.as(merchant, { method: 'POST', url, payload });
  expect(res.statusCode).toBe(201);
  const [event] = await svc.db.$queryRaw<{ id: string }[]>`SELECT id FROM transaction_events WHERE transaction_id = ${res.json().id}::uuid`;
  return event!.id;
}

/** Settles a delivery as callback-svc would after `attempts` attempts (their status codes). */
async function settle(eventId: string, status: string, codes: number[]) {
  for (const [i, code] of codes.entries()) {
    await svc.db.$executeRaw`
      INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, error, duration_ms)
      VALUES (${eventId}, ${i + 1}, now(), 'https://example.com/cb', ${code}, NULL, 5)`;
  }
  await svc.db.$executeRaw`
    UPDATE callback_deliveries SET status = ${status}::delivery_status, attempt_count = ${codes.length} WHERE event_id = ${eventId}`;
}

async function createdAgo(eventId: string, seconds: number) {
  await svc.db.$executeRaw`UPDATE transaction_events SET created_at = now() - make_interval(secs => ${seconds}) WHERE id = ${eventId}`;
}

async function delivery(eventId: string) {
  const [row] = await svc.db.$queryRaw<{ status: string; series_start: number; trigger: string; attempt_count: number }[]>`
    SELECT status::text, series_start, trigger::text, attempt_count FROM callback_deliveries WHERE event_id = ${eventId}`;
  return row!;
}

type OutboxRow = { id: bigint; event_id: string; routing_key: string; payload: unknown; headers: Record<string, unknown> };

/** The outbox rows of new events (the create's). */
async function outbox(eventId: string) {
  return svc.db.$queryRaw<OutboxRow[]>`SELECT id, event_id, routing_key, payload, headers FROM outbox WHERE event_id = ${eventId} ORDER BY id`;
}

/** What redelivery and recovery queued: the manual lane's outbox. */
async function queued(eventId?: string) {
  return svc.db.$queryRaw<OutboxRow[]>`
    SELECT id, event_id, routing_key, payload, headers FROM manual_outbox WHERE ${eventId ?? null}::text IS NULL OR event_id = ${eventId ?? null} ORDER BY id`;
}

async function clearOutbox() {
  await svc.db.$executeRaw`DELETE FROM outbox`;
  await svc.db.$executeRaw`DELETE FROM manual_outbox`;
}

const redeliver = (payload: unknown, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'POST', url: '/api/redeliverCallback', payload: payload as object });
const recover = (payload: unknown, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'POST', url: '/api/recoverCallbacks', payload: payload as object });

describe('POST /api/redeliverCallback', () => {
  it('answers 202 with the event and its delivery, pending again, its earlier attempts kept', async () => {
    const eventId = await create(svc.merchantA);
    await settle(eventId, 'failed', [500, 500, 500, 500, 500, 500]);
    const res = await redeliver({ eventId });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ id: eventId, type: 'deposit.pending', delivery: { status: 'pending' } });
    expect(body.delivery.attempts.map((a: { attempt: number; trigger: string }) => [a.attempt, a.trigger])).toEqual(
      [1, 2, 3, 4, 5, 6].map((i) => [i, 'automatic']),
    );
  });

  it('starts a new series numbered after the earlier attempts, and queues the same event to the manual lane with the next attempt number', async () => {
    await clearOutbox();
    const eventId = await create(svc.merchantA);
    const [original] = await outbox(eventId);
    await settle(eventId, 'succeeded', [503, 200]);
    await clearOutbox();
    expect((await redeliver({ eventId })).statusCode).toBe(202);
    expect(await delivery(eventId)).toEqual({ status: 'pending', series_start: 2, trigger: 'manual', attempt_count: 2 });
    const rows = await queued(eventId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ routing_key: 'manual.deposit.pending', payload: original!.payload });
    expect(rows[0]!.headers).toMatchObject({ 'x-dw-merchant': svc.merchantA, 'x-attempt': 3 });
  });

  it('redelivers a skipped delivery from attempt 1', async () => {
    await clearOutbox();
    const eventId = await create(svc.merchantA, 'withdraw');
    await settle(eventId, 'skipped', []);
    await clearOutbox();
    expect((await redeliver({ eventId })).statusCode).toBe(202);
    expect((await queued(eventId))[0]!.headers).toMatchObject({ 'x-attempt': 1 });
  });

  it.each(['pending', 'retrying'])('answers 409 conflict while the delivery is %s, and queues nothing', async (status) => {
    await clearOutbox();
    const eventId = await create(svc.merchantA);
    await clearOutbox();
    if (status === 'retrying') await settle(eventId, 'retrying', [500]);
    const res = await redeliver({ eventId });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('conflict');
    expect(await queued()).toEqual([]);
    expect((await delivery(eventId)).trigger).toBe('automatic');
  });

  it('answers 409 to a second redelivery before the first series settled', async () => {
    const eventId = await create(svc.merchantA);
    await settle(eventId, 'failed', [500]);
    expect((await redeliver({ eventId })).statusCode).toBe(202);
    expect((await redeliver({ eventId })).statusCode).toBe(409);
  });

  it('starts at most 10 series for one event: the 11th answers 409 naming the cap, and queues nothing', async () => {
    const eventId = await create(svc.merchantA);
    await settle(eventId, 'failed', [500]);
    for (let i = 0; i < 10; i++) {
      expect((await redeliver({ eventId })).statusCode).toBe(202);
      await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'failed' WHERE event_id = ${eventId}`;
    }
    await clearOutbox();
    const capped = await redeliver({ eventId });
    expect(capped.statusCode).toBe(409);
    expect(capped.json()).toMatchObject({ code: 'conflict', detail: expect.stringContaining('10 times') });
    expect(await queued(eventId)).toEqual([]);
    expect(await delivery(eventId)).toMatchObject({ status: 'failed' });
    // Nor does a recovery start an 11th.
    const since = new Date(Date.now() - 60_000).toISOString();
    await recover({ since });
    expect(await queued(eventId)).toEqual([]);
  });

  it("answers 404 for an unknown event and for another merchant's, with the same body, and changes nothing", async () => {
    await clearOutbox();
    const theirs = await create(svc.merchantB);
    await settle(theirs, 'failed', [500]);
    await clearOutbox();
    const other = await redeliver({ eventId: theirs });
    const unknown = await redeliver({ eventId: 'evt_0123456789abcdef0123456789abcdef' });
    expect(other.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(other.json())).toEqual(strip(unknown.json()));
    expect(other.json().code).toBe('not_found');
    expect(await delivery(theirs)).toMatchObject({ status: 'failed', trigger: 'automatic' });
    expect(await queued()).toEqual([]);
  });

  it.each([[{}], [{ eventId: '' }], [{ eventId: 'tx_1' }], [{ eventId: 42 }], [{ eventId: 'evt_a', extra: 1 }], [{ eventId: `evt_${'a'.repeat(61)}` }]])(
    'answers 400 validation_failed for %j',
    async (payload) => {
      const res = await redeliver(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    },
  );
});

describe('POST /api/recoverCallbacks', () => {
  const since = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();

  it('restarts exactly the failed and skipped deliveries of the window, in event order, and only the caller\'s', async () => {
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded'`; // earlier tests' events are out of the way
    const failedLate = await create(svc.merchantA);
    const skipped = await create(svc.merchantA, 'withdraw');
    const failedEarly = await create(svc.merchantA);
    const succeeded = await create(svc.merchantA);
    const retrying = await create(svc.merchantA);
    const before = await create(svc.merchantA);
    const theirs = await create(svc.merchantB);
    await settle(failedLate, 'failed', [500, 500, 500, 500, 500, 500]);
    await settle(skipped, 'skipped', []);
    await settle(failedEarly, 'failed', [404, 404, 404, 404, 404, 404]);
    await settle(succeeded, 'succeeded', [200]);
    await settle(retrying, 'retrying', [500]);
    await settle(before, 'failed', [500]);
    await settle(theirs, 'failed', [500]);
    await createdAgo(failedLate, 100);
    await createdAgo(skipped, 200);
    await createdAgo(failedEarly, 300);
    await createdAgo(succeeded, 250);
    await createdAgo(retrying, 150);
    await createdAgo(before, 1000);
    await createdAgo(theirs, 100);
    await clearOutbox();

    const res = await recover({ since: since(500) });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ recovered: 3 });
    expect((await queued()).map((r) => r.event_id)).toEqual([failedEarly, skipped, failedLate]);
    expect((await queued()).map((r) => r.headers['x-attempt'])).toEqual([7, 1, 7]);
    // The manual lane: a recovery never stands in front of anyone's new callbacks.
    expect((await queued()).map((r) => r.routing_key)).toEqual(['manual.deposit.pending', 'manual.withdraw.pending', 'manual.deposit.pending']);
    for (const id of [failedEarly, skipped, failedLate]) expect(await delivery(id)).toMatchObject({ status: 'pending', trigger: 'manual' });
    expect(await delivery(succeeded)).toMatchObject({ status: 'succeeded', trigger: 'automatic' });
    expect(await delivery(retrying)).toMatchObject({ status: 'retrying', trigger: 'automatic' });
    expect(await delivery(before)).toMatchObject({ status: 'failed', trigger: 'automatic' });
    expect(await delivery(theirs)).toMatchObject({ status: 'failed', trigger: 'automatic' });

    // Safe to call twice: what is recovering already is not queued again.
    const again = await recover({ since: since(500) });
    expect(again.json()).toEqual({ recovered: 0 });
    expect(await queued()).toHaveLength(3);
  });

  it('honours until (exclusive) and type', async () => {
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded'`;
    const deposit = await create(svc.merchantA);
    const withdraw = await create(svc.merchantA, 'withdraw');
    const newer = await create(svc.merchantA);
    for (const id of [deposit, withdraw, newer]) await settle(id, 'failed', [500]);
    await createdAgo(deposit, 300);
    await createdAgo(withdraw, 300);
    await svc.db.$executeRaw`UPDATE transaction_events SET created_at = date_trunc('milliseconds', now()) - interval '100 seconds' WHERE id = ${newer}`;
    const { at } = (await svc.db.$queryRaw<{ at: Date }[]>`SELECT created_at AS at FROM transaction_events WHERE id = ${newer}`)[0]!;
    await clearOutbox();
    const res = await recover({ since: since(600), until: at.toISOString(), type: 'withdraw' });
    expect(res.json()).toEqual({ recovered: 1 });
    expect((await queued()).map((r) => r.event_id)).toEqual([withdraw]);
    expect((await recover({ since: since(600), until: at.toISOString() })).json()).toEqual({ recovered: 1 });
    expect((await queued()).map((r) => r.event_id)).toEqual([withdraw, deposit]);
  });

  it('answers 400 naming the limit for since more than 14 days ago, and recovers nothing', async () => {
    const res = await recover({ since: since(14 * 86_400 + 60) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/since', message: 'must be at most 14 days ago' }]);
  });

  it.each([
    ['until before since', () => ({ since: since(60), until: since(120) })],
    // One instant for both: two calls of since() may fall in different milliseconds.
    ['until equal to since', () => { const at = since(60); return { since: at, until: at }; }],
    ['no since', () => ({ until: since(60) })],
    ['a date that does not exist', () => ({ since: '2026-02-30T00:00:00Z' })],
    ['not a date', () => ({ since: 'yesterday' })],
    ['an unknown type', () => ({ since: since(60), type: 'refund' })],
    ['an unknown field', () => ({ since: since(60), limit: 5 })],
  ])('answers 400 validation_failed for %s', async (_name, payload) => {
    const res = await recover(payload());
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.length).toBeGreaterThan(0);
  });

  it('names the field the merchant sent when the window [since, until) is empty', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await recover({ since: future })).json()).toMatchObject({
      detail: 'Fix the body field since: must be in the past (until, not given, is now).',
      errors: [{ path: '/since', message: 'must be in the past (until, not given, is now)' }],
    });
    expect((await recover({ since: since(60), until: since(120) })).json()).toMatchObject({
      detail: 'Fix the body field until: must be later than since.',
      errors: [{ path: '/until', message: 'must be later than since' }],
    });
  });

  it(`answers 400 naming the limit when the window holds more than ${RECOVERY_MAX_EVENTS} events, and recovers none`, async () => {
    const merchant = svc.merchantB;
    const eventId = await create(merchant);
    const { transaction_id } = (await svc.db.$queryRaw<{ transaction_id: string }[]>`SELECT transaction_id FROM transaction_events WHERE id = ${eventId}`)[0]!;
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded'`;
    await svc.db.$executeRaw`
      WITH e AS (
        INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
        SELECT 'evt_bulk' || g, ${transaction_id}::uuid, ${merchant}::uuid, 100 + g, 'deposit.failed', 'failed', '{}'::jsonb, now() - interval '1 hour'
          FROM generate_series(1, ${RECOVERY_MAX_EVENTS + 1}) g
        RETURNING id)
      INSERT INTO callback_deliveries (event_id, status) SELECT id, 'failed' FROM e`;
    await clearOutbox();
    const res = await recover({ since: since(7200) }, merchant);
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain('10000');
    expect(await queued()).toEqual([]);
    const { failed } = (await svc.db.$queryRaw<{ failed: bigint }[]>`SELECT count(*) AS failed FROM callback_deliveries WHERE status = 'failed'`)[0]!;
    expect(Number(failed)).toBe(RECOVERY_MAX_EVENTS + 1);
    // One fewer fits.
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded' WHERE event_id = 'evt_bulk1'`;
    expect((await recover({ since: since(7200) }, merchant)).json()).toEqual({ recovered: RECOVERY_MAX_EVENTS });
  });
});

describe('only the gateway speaks for a merchant (docs/api.md#processes-and-health)', () => {
  it('answers 401 to a direct caller naming a merchant, and restarts nothing', async () => {
    const eventId = await create(svc.merchantA);
    await settle(eventId, 'failed', [500]);
    await clearOutbox();
    for (const [url, payload] of [
      ['/api/redeliverCallback', { eventId }],
      ['/api/recoverCallbacks', { since: new Date(Date.now() - 60_000).toISOString() }],
    ] as const) {
      const res = await svc.app.inject({ method: 'POST', url, payload, headers: { 'x-merchant-id': svc.merchantA } });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    }
    expect(await queued()).toEqual([]);
    expect(await delivery(eventId)).toMatchObject({ status: 'failed', trigger: 'automatic' });
  });
});
