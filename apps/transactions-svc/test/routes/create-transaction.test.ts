import pino from 'pino';
import { buildApp } from '../../src/app';
import { createPool } from '@dw/db';
import { createTransaction } from '../../src/domain/transactions-repo';
import { asGateway, INTERNAL_SECRET, rowCounts, startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('create');
});
afterAll(async () => svc?.close());

const deposit = (body: unknown, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'POST', url: '/api/createDeposit', payload: body as object });
const withdraw = (body: unknown, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'POST', url: '/api/createWithdraw', payload: body as object });

let n = 0;
const orderId = () => `order-${Date.now()}-${++n}`;

describe('POST /api/createDeposit', () => {
  it('creates a pending deposit and answers 201 with the transaction object', async () => {
    const id = orderId();
    const res = await deposit({ amount: '100.50', currency: 'USD', orderId: id, metadata: { cart: '7' } });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json; charset=utf-8/);
    const tx = res.json();
    expect(tx).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'deposit',
      status: 'pending',
      amount: '100.50',
      currency: 'USD',
      orderId: id,
      description: null,
      metadata: { cart: '7' },
      destination: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: tx.createdAt,
    });
  });

  it('returns the amount exactly as created, with no float rounding', async () => {
    for (const amount of ['0.00000001', '999999999999999999.99999999', '123456789012345678', '0.1', '7.10']) {
      const res = await deposit({ amount, currency: 'USDT', orderId: orderId() });
      expect(res.statusCode).toBe(201);
      expect(res.json().amount).toBe(amount);
    }
  });

  it('writes the pending event (sequence 1), its delivery and its outbox row in the same commit', async () => {
    const res = await deposit({ amount: '5', currency: 'EUR', orderId: orderId() });
    const tx = res.json();
    const events = await svc.db.$queryRaw<{ id: string; sequence: number; type: string; payload: any }[]>`
      SELECT id, sequence, type, payload FROM transaction_events WHERE transaction_id = ${tx.id}::uuid`;
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event!.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(event!.sequence).toBe(1);
    expect(event!.type).toBe('deposit.pending');
    expect(event!.payload).toEqual({ id: event!.id, type: 'deposit.pending', createdAt: tx.createdAt, sequence: 1, data: tx });
    const outbox = await svc.db.$queryRaw<{ routing_key: string; payload: any }[]>`
      SELECT routing_key, payload FROM outbox WHERE event_id = ${event!.id}`;
    expect(outbox).toEqual([{ routing_key: 'deposit.pending', payload: event!.payload }]);
    const deliveries = await svc.db.$queryRaw<{ status: string }[]>`
      SELECT status::text FROM callback_deliveries WHERE event_id = ${event!.id}`;
    expect(deliveries).toEqual([{ status: 'pending' }]);
  });
});

describe('idempotency by orderId', () => {
  it('replays an identical createDeposit with 200, Idempotent-Replayed: true and the original transaction', async () => {
    const body = { amount: '100.50', currency: 'USD', orderId: orderId(), metadata: { a: '1', b: '2' } };
    const first = await deposit(body);
    const again = await deposit({ ...body, amount: '100.5', metadata: { b: '2', a: '1' } });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(first.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each([
    ['amount', { amount: '100.51' }],
    ['currency', { currency: 'EUR' }],
    ['description', { description: 'other' }],
    ['metadata', { metadata: { a: '2' } }],
  ])('answers 409 when %s differs, and keeps the original', async (_field, change) => {
    const body = { amount: '100.50', currency: 'USD', orderId: orderId(), metadata: { a: '1' } };
    const first = await deposit(body);
    const before = await rowCounts(svc.db);
    const res = await deposit({ ...body, ...change });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 409, code: 'conflict' });
    expect(await rowCounts(svc.db)).toEqual(before);
    const again = await deposit(body);
    expect(again.json().id).toBe(first.json().id);
  });

  it('treats an omitted description and metadata as the same as the first omission', async () => {
    const body = { amount: '1', currency: 'USD', orderId: orderId() };
    await deposit(body);
    expect((await deposit({ ...body, metadata: {} })).statusCode).toBe(200);
  });

  it('scopes orderId per merchant and per type', async () => {
    const id = orderId();
    expect((await deposit({ amount: '1', currency: 'USD', orderId: id })).statusCode).toBe(201);
    expect((await deposit({ amount: '1', currency: 'USD', orderId: id }, svc.merchantB)).statusCode).toBe(201);
    expect((await withdraw({ amount: '1', currency: 'USD', orderId: id, destination: 'acct-1' })).statusCode).toBe(201);
  });

  it('creates exactly one transaction for 25 simultaneous identical requests', async () => {
    const body = { amount: '42.00', currency: 'USD', orderId: orderId() };
    const before = await rowCounts(svc.db);
    const results = await Promise.all(Array.from({ length: 25 }, () => deposit(body)));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(1);
    expect(codes.filter((c) => c === 200)).toHaveLength(24);
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1);
    const after = await rowCounts(svc.db);
    expect(after.tx - before.tx).toBe(1);
    expect(after.ev - before.ev).toBe(1);
    expect(after.ob - before.ob).toBe(1);
  });
});

describe('creates that arrive together (written in one batch)', () => {
  it('gives each of 60 simultaneous creates of two merchants its own transaction, event and outbox row', async () => {
    const before = await rowCounts(svc.db);
    const shared = orderId(); // the same orderId for both merchants and both types: four transactions
    const bodies = Array.from({ length: 56 }, (_, i) => ({ amount: `${i + 1}.25`, currency: 'USD', orderId: orderId(), metadata: { i: String(i) } }));
    const results = await Promise.all([
      ...bodies.map((b, i) => deposit(b, i % 2 ? svc.merchantA : svc.merchantB)),
      deposit({ amount: '1', currency: 'USD', orderId: shared }, svc.merchantA),
      deposit({ amount: '2', currency: 'USD', orderId: shared }, svc.merchantB),
      withdraw({ amount: '3', currency: 'USD', orderId: shared, destination: 'acct-a' }, svc.merchantA),
      withdraw({ amount: '4', currency: 'USD', orderId: shared, destination: 'acct-b' }, svc.merchantB),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual(Array(60).fill(201));
    bodies.forEach((b, i) => expect(results[i]!.json()).toMatchObject({ amount: b.amount, orderId: b.orderId, metadata: b.metadata }));
    expect(results.slice(56).map((r) => [r.json().type, r.json().amount])).toEqual([['deposit', '1'], ['deposit', '2'], ['withdraw', '3'], ['withdraw', '4']]);
    expect(new Set(results.map((r) => r.json().id)).size).toBe(60);
    const after = await rowCounts(svc.db);
    expect([after.tx - before.tx, after.ev - before.ev, after.ob - before.ob]).toEqual([60, 60, 60]);
    // Each outbox row names its own merchant (the header callback-svc shares capacity by).
    const owners = await svc.db.$queryRaw<{ tx: string; merchant: string; header: string }[]>`
      SELECT t.id::text AS tx, t.merchant_id::text AS merchant, o.headers->>'x-dw-merchant' AS header
        FROM transactions t JOIN transaction_events e ON e.transaction_id = t.id JOIN outbox o ON o.event_id = e.id
       WHERE t.order_id = ${shared}`;
    expect(owners).toHaveLength(4);
    for (const o of owners) expect(o.header).toBe(o.merchant);
  });

  it('fails only the create PostgreSQL refuses, not the others written with it', async () => {
    const base = { merchantId: svc.merchantA, type: 'deposit' as const, currency: 'USD', description: null, metadata: {}, destination: null, traceparent: null };
    const before = await rowCounts(svc.db);
    // Past the request schema (which refuses it first), an amount the numeric column cannot hold.
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 9 }, () => createTransaction(svc.pool, { ...base, amount: '1.00', orderId: orderId() })),
      createTransaction(svc.pool, { ...base, amount: 'not-a-number', orderId: orderId() }),
      ...Array.from({ length: 9 }, () => createTransaction(svc.pool, { ...base, amount: '2.00', orderId: orderId() })),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([...Array(9).fill('fulfilled'), 'rejected', ...Array(9).fill('fulfilled')]);
    expect((outcomes[9] as PromiseRejectedResult).reason).toMatchObject({ code: '22P02' });
    const after = await rowCounts(svc.db);
    expect(after.tx - before.tx).toBe(18);
  });
});

describe('POST /api/createWithdraw', () => {
  it('creates a withdraw with its destination', async () => {
    const res = await withdraw({ amount: '10', currency: 'USD', orderId: orderId(), destination: 'IBAN DE89 3704' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ type: 'withdraw', destination: 'IBAN DE89 3704', status: 'pending' });
  });

  it('answers 409 when only the destination differs', async () => {
    const body = { amount: '10', currency: 'USD', orderId: orderId(), destination: 'a' };
    await withdraw(body);
    expect((await withdraw({ ...body, destination: 'b' })).statusCode).toBe(409);
    expect((await withdraw(body)).statusCode).toBe(200);
  });
});

describe('bad input: 400 validation_failed naming the field, nothing written', () => {
  const valid = { amount: '1.00', currency: 'USD', orderId: 'x' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['amount as a number', { ...valid, amount: 100 }, '/amount'],
    ['amount zero', { ...valid, amount: '0' }, '/amount'],
    ['amount 0.00', { ...valid, amount: '0.00' }, '/amount'],
    ['negative amount', { ...valid, amount: '-1' }, '/amount'],
    ['signed amount', { ...valid, amount: '+1' }, '/amount'],
    ['exponent', { ...valid, amount: '1e3' }, '/amount'],
    ['19 integer digits', { ...valid, amount: '1234567890123456789' }, '/amount'],
    ['9 fraction digits', { ...valid, amount: '1.123456789' }, '/amount'],
    ['trailing dot', { ...valid, amount: '1.' }, '/amount'],
    ['leading dot', { ...valid, amount: '.5' }, '/amount'],
    ['spaces', { ...valid, amount: ' 1' }, '/amount'],
    ['lower-case currency', { ...valid, currency: 'usd' }, '/currency'],
    ['short currency', { ...valid, currency: 'US' }, '/currency'],
    ['long currency', { ...valid, currency: 'ABCDEFGHIJK' }, '/currency'],
    ['empty orderId', { ...valid, orderId: '' }, '/orderId'],
    ['129-char orderId', { ...valid, orderId: 'x'.repeat(129) }, '/orderId'],
    ['control char in orderId', { ...valid, orderId: 'a\u0007b' }, '/orderId'],
    ['DEL in orderId', { ...valid, orderId: 'a\u007fb' }, '/orderId'],
    ['501-char description', { ...valid, description: 'd'.repeat(501) }, '/description'],
    ['null description', { ...valid, description: null }, '/description'],
    ['metadata array', { ...valid, metadata: ['a'] }, '/metadata'],
    ['metadata number value', { ...valid, metadata: { a: 1 } }, '/metadata/a'],
    ['metadata long value', { ...valid, metadata: { a: 'v'.repeat(501) } }, '/metadata/a'],
    ['metadata long key', { ...valid, metadata: { ['k'.repeat(41)]: 'v' } }, '/metadata/' + 'k'.repeat(41)],
    ['metadata 21 keys', { ...valid, metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, '/metadata'],
    ['unknown field', { ...valid, merchantId: 'x' }, '/merchantId'],
    ['missing amount', { currency: 'USD', orderId: 'x' }, '/amount'],
  ];

  it.each(cases)('%s', async (_name, body, path) => {
    const before = await rowCounts(svc.db);
    const res = await deposit(body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed', title: expect.any(String) });
    expect(problem.requestId).toBe(res.headers['x-request-id']);
    expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await rowCounts(svc.db)).toEqual(before);
  });

  it('names every offending field at once', async () => {
    const res = await deposit({ amount: 'abc', currency: 'x', orderId: '' });
    expect(res.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/amount', '/currency', '/orderId']);
  });

  it('says what a field accepts when a character is refused: a NUL in orderId or destination', async () => {
    const res = await withdraw({ ...valid, orderId: 'order\u0000-1', destination: 'acct\u0000' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { path: '/orderId', message: expect.stringMatching(/^must be 1–128 printable characters/) },
      { path: '/destination', message: expect.stringMatching(/^must be 1–256 printable characters/) },
    ]);
  });

  it('requires a destination on withdraws', async () => {
    const res = await withdraw(valid);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/destination', message: 'is required' }]);
  });

  it('accepts 128 printable characters of any script in orderId', async () => {
    const res = await deposit({ ...valid, orderId: 'é'.repeat(64) + '😀'.repeat(64) });
    expect(res.statusCode).toBe(201);
  });

  it('answers 400 for malformed JSON and 415 for a body that is not JSON', async () => {
    const bad = await svc.as(svc.merchantA, {
      method: 'POST',
      url: '/api/createDeposit',
      headers: { 'content-type': 'application/json' },
      payload: '{"amount":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');
    const text = await svc.as(svc.merchantA, {
      method: 'POST',
      url: '/api/createDeposit',
      headers: { 'content-type': 'text/plain' },
      payload: 'amount=1',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');
  });

  it('answers 401 without the merchant id the gateway adds', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/createDeposit', payload: valid });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthorized');
  });
});

describe('when PostgreSQL is unreachable', () => {
  it('answers 503 service_unavailable (never 500) and /readyz 503', async () => {
    const db = createPool('postgresql://postgres@127.0.0.1:1/nowhere', 1);
    const app = buildApp({
      config: { adminToken: undefined, sandboxSettleMs: 0, allowPrivateHosts: false, internalAuthSecrets: [INTERNAL_SECRET] },
      db,
      logger: pino({ level: 'silent' }),
    });
    try {
      const res = await app.inject(
        asGateway(svc.merchantA, { method: 'POST', url: '/api/createDeposit', payload: { amount: '1', currency: 'USD', orderId: 'db-down' } }),
      );
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'service_unavailable' });
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await app.close();
      await db.end();
    }
  });
});
