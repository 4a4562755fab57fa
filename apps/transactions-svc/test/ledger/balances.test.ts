import { rowCounts, startTestService, type TestService } from '../support/service';
import { ledgerClient, orderId, problemOf } from './support';

let svc: TestService;
let ledger: ReturnType<typeof ledgerClient>;
beforeAll(async () => {
  svc = await startTestService('ledger-balances');
  ledger = ledgerClient(svc);
});
afterAll(async () => svc?.close());

describe('GET /api/getBalance', () => {
  it('lists no balance for a merchant that never had an entry', async () => {
    const m = await ledger.merchant();
    const res = await svc.as(m, { method: 'GET', url: '/api/getBalance' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ balances: [] });
  });

  it('moves a deposit through incoming into available, exactly', async () => {
    const m = await ledger.merchant();
    const created = await ledger.create(m, 'deposit', '100.50');
    expect(await ledger.balance(m)).toEqual({ currency: 'USD', available: '0', held: '0', incoming: '100.50', creditLimit: '0' });
    await ledger.setStatus(created.json().id, 'processing');
    expect(await ledger.balance(m)).toMatchObject({ available: '0', incoming: '100.50' });
    await ledger.setStatus(created.json().id, 'completed');
    expect(await ledger.balance(m)).toEqual({ currency: 'USD', available: '100.50', held: '0', incoming: '0.00', creditLimit: '0' });
  });

  it('takes a failed deposit out of incoming without making it available', async () => {
    const m = await ledger.merchant();
    const created = await ledger.create(m, 'deposit', '7.25', 'EUR');
    await ledger.setStatus(created.json().id, 'failed');
    expect(await ledger.balance(m, 'EUR')).toMatchObject({ available: '0', held: '0', incoming: '0.00' });
  });

  it('lists one balance per currency, by currency code, each never a float', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '0.1', 'USDT');
    await ledger.fund(m, '0.2', 'USDT');
    await ledger.fund(m, '999999999999999999.99999999', 'EUR');
    await ledger.fund(m, '0.00000001', 'EUR');
    const res = await svc.as(m, { method: 'GET', url: '/api/getBalance' });
    expect(res.json().balances.map((b: { currency: string; available: string }) => [b.currency, b.available])).toEqual([
      ['EUR', '1000000000000000000.00000000'],
      ['USDT', '0.3'],
    ]);
  });
});

describe('POST /api/createWithdraw and the balance', () => {
  it('refuses a withdraw past the balance with 422 insufficient_funds, writing nothing', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '100.50');
    const before = await rowCounts(svc.db);
    const id = orderId();
    const res = await ledger.create(m, 'withdraw', '999999999', 'USD', id);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = problemOf(res);
    expect(problem).toMatchObject({ status: 422, code: 'insufficient_funds', title: 'Insufficient funds' });
    expect(problem.detail).toContain('USD');
    expect(problem.detail).toContain('999999999');
    expect(problem.detail).toContain('100.50');
    expect(await rowCounts(svc.db)).toEqual(before);
    expect(await ledger.balance(m)).toMatchObject({ available: '100.50', held: '0' });
    // The same orderId is free once funds arrive.
    await ledger.fund(m, '999999999');
    expect((await ledger.create(m, 'withdraw', '999999999', 'USD', id)).statusCode).toBe(201);
  });

  it('refuses any withdraw before the first deposit (no balance at all)', async () => {
    const m = await ledger.merchant();
    const res = await ledger.create(m, 'withdraw', '0.01', 'JPY');
    expect(res.statusCode).toBe(422);
    expect(problemOf(res).detail).toContain('at most 0 JPY');
  });

  it('holds a created withdraw, releases it when the withdraw fails and spends it when it completes', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '50');
    const a = await ledger.create(m, 'withdraw', '20.5');
    expect(a.statusCode).toBe(201);
    expect(await ledger.balance(m)).toMatchObject({ available: '29.5', held: '20.5', incoming: '0' });
    await ledger.setStatus(a.json().id, 'failed');
    expect(await ledger.balance(m)).toMatchObject({ available: '50.0', held: '0.0' });
    const b = await ledger.create(m, 'withdraw', '50');
    expect(b.statusCode).toBe(201);
    expect(await ledger.balance(m)).toMatchObject({ available: '0.0', held: '50.0' });
    await ledger.setStatus(b.json().id, 'processing');
    await ledger.setStatus(b.json().id, 'completed');
    expect(await ledger.balance(m)).toMatchObject({ available: '0.0', held: '0.0' });
    expect((await ledger.create(m, 'withdraw', '0.00000001')).statusCode).toBe(422);
  });

  it('never holds twice for a replay, and replays a created withdraw even after the balance has fallen', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '10');
    const id = orderId();
    const first = await ledger.create(m, 'withdraw', '6', 'USD', id);
    expect(first.statusCode).toBe(201);
    const replays = await Promise.all(Array.from({ length: 5 }, () => ledger.create(m, 'withdraw', '6', 'USD', id)));
    expect(replays.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(replays.every((r) => r.headers['idempotent-replayed'] === 'true' && r.json().id === first.json().id)).toBe(true);
    expect(await ledger.balance(m)).toMatchObject({ available: '4', held: '6' });
    // Another different withdraw under the same orderId is a conflict, not a refusal.
    expect((await ledger.create(m, 'withdraw', '600', 'USD', id)).statusCode).toBe(409);
  });

  it('lets a credit limit take available below zero, and not one cent further', async () => {
    const m = await ledger.merchant('25.00');
    expect((await ledger.create(m, 'withdraw', '25.01')).statusCode).toBe(422);
    expect((await ledger.create(m, 'withdraw', '20')).statusCode).toBe(201);
    expect(await ledger.balance(m)).toEqual({ currency: 'USD', available: '-20', held: '20', incoming: '0', creditLimit: '25.00' });
    const refused = await ledger.create(m, 'withdraw', '5.01');
    expect(problemOf(refused).detail).toContain('at most 5.00 USD');
    expect((await ledger.create(m, 'withdraw', '5')).statusCode).toBe(201);
  });

  it('admits exactly 10 of 40 simultaneous withdraws of 1.00 against 10.00', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '10.00');
    const results = await Promise.all(Array.from({ length: 40 }, () => ledger.create(m, 'withdraw', '1.00')));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c === 422)).toHaveLength(30);
    expect(await ledger.balance(m)).toMatchObject({ available: '0.00', held: '10.00' });
  });

  it('admits, of simultaneous withdraws of different sizes, those that fit in some order', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '10');
    // 8 first, then 5 cannot fit but 2 can: a batch must not refuse the 2 for the 5's sake.
    const results = await Promise.all(['8', '5', '2'].map((amount) => ledger.create(m, 'withdraw', amount)));
    const amounts = ['8', '5', '2'];
    const admitted = amounts.filter((_, i) => results[i]!.statusCode === 201).map(Number);
    const refused = amounts.filter((_, i) => results[i]!.statusCode === 422).map(Number);
    expect(admitted.length + refused.length).toBe(3);
    expect(admitted.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10);
    // Each refusal saw less than it asked, and none would fit in what is left at the end.
    for (const r of results.filter((x) => x.statusCode === 422)) {
      const [, asked, withdrawable] = /asks (\S+) and at most (\S+) USD/.exec(problemOf(r).detail)!;
      expect(Number(withdrawable)).toBeLessThan(Number(asked));
    }
    const left = Number((await ledger.balance(m))!.available);
    expect(left).toBe(10 - admitted.reduce((a, b) => a + b, 0));
    for (const amount of refused) expect(left).toBeLessThan(amount);
  });
});
