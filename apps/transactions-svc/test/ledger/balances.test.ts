import { adjustBalance } from '../../src/domain/ledger-admin';
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

  it('names the amount asked as the transaction would have stored it, not as typed', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '5');
    const res = await ledger.create(m, 'withdraw', '007.50');
    expect(res.statusCode).toBe(422);
    expect(problemOf(res).detail).toContain('the withdraw asks 7.50 and at most 5 USD can be withdrawn');
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

describe('GET /api/getBalanceHistory', () => {
  it('lists the entries newest first, each with its signed change and the balance right after it', async () => {
    const m = await ledger.merchant();
    const d = await ledger.create(m, 'deposit', '100.50');
    await ledger.setStatus(d.json().id, 'completed');
    const w = await ledger.create(m, 'withdraw', '40');
    await ledger.setStatus(w.json().id, 'failed');
    const res = await ledger.history(m);
    expect(res.statusCode).toBe(200);
    const { items, nextCursor } = res.json();
    expect(nextCursor).toBeNull();
    expect(items.map((e: { kind: string }) => e.kind)).toEqual(['withdraw.release', 'withdraw.hold', 'deposit.completed', 'deposit.pending']);
    expect(items[0]).toEqual({
      id: expect.stringMatching(/^le_[0-9a-f]{32}$/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      currency: 'USD',
      kind: 'withdraw.release',
      change: { available: '40', held: '-40', incoming: '0' },
      available: '100.50',
      held: '0',
      incoming: '0.00',
      transactionId: w.json().id,
      reason: null,
      reference: null,
    });
    expect(items[3]).toMatchObject({ change: { available: '0', held: '0', incoming: '100.50' }, available: '0', incoming: '100.50', transactionId: d.json().id });
  });

  it('dates each entry as the status change that wrote it: the transaction\'s createdAt, then its updatedAt', async () => {
    const m = await ledger.merchant();
    const d = await ledger.create(m, 'deposit', '7.25');
    const completed = await ledger.setStatus(d.json().id, 'completed');
    const w = await ledger.create(m, 'withdraw', '2');
    const items = (await ledger.history(m)).json().items as { kind: string; createdAt: string }[];
    expect(items.map((e) => [e.kind, e.createdAt])).toEqual([
      ['withdraw.hold', w.json().createdAt],
      ['deposit.completed', completed.json().updatedAt],
      ['deposit.pending', d.json().createdAt],
    ]);
  });

  it('pages with the cursor without skipping or repeating an entry, and filters by currency and time', async () => {
    const m = await ledger.merchant();
    for (const c of ['USD', 'EUR', 'USD', 'EUR', 'USD']) await ledger.fund(m, '1', c);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res = await ledger.history(m, `?currency=USD&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page: { items: { id: string; currency: string }[]; nextCursor: string | null } = res.json();
      expect(page.items.every((e) => e.currency === 'USD')).toBe(true);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    const all = (await ledger.history(m, '?limit=100')).json().items as { id: string; createdAt: string }[];
    expect(all).toHaveLength(10);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await ledger.history(m, `?from=${future}`)).json().items).toEqual([]);
    expect((await ledger.history(m, `?to=${future}`)).json().items).toHaveLength(10);
  });

  it.each([['?limit=0'], ['?limit=101'], ['?currency=usd'], ['?cursor=bm9wZQ'], ['?from=yesterday'], ['?extra=1']])('answers %s with 400', async (q) => {
    const m = await ledger.merchant();
    const res = await ledger.history(m, q);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
  });

  it('refuses a cursor holding a date no calendar has, as a cursor this API did not issue', async () => {
    const m = await ledger.merchant();
    const forged = Buffer.from(JSON.stringify(['2026-02-30T20:07:56.302Z', 'USD', '28'])).toString('base64url');
    const res = await ledger.history(m, `?cursor=${forged}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }]);
  });

  it("shows only the merchant's own entries", async () => {
    const [a, b] = [await ledger.merchant(), await ledger.merchant()];
    await ledger.fund(a, '5');
    expect((await ledger.history(b)).json().items).toEqual([]);
  });

  it('downloads every matching entry as CSV with Accept: text/csv, signed amounts exact and text neutralised', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '12.34');
    const w = await ledger.create(m, 'withdraw', '2.34');
    await ledger.setStatus(w.json().id, 'failed');
    await adjustBalance(svc.pool, { merchantId: m, currency: 'EUR', amount: '1', reason: '=HYPERLINK("http://x")', reference: '@ref', actor: 't' });
    const eur = await svc.as(m, { method: 'GET', url: '/api/getBalanceHistory?currency=EUR', headers: { accept: 'text/csv' } });
    expect(eur.body.split('\r\n')[1]).toMatch(/,"'=HYPERLINK\(""http:\/\/x""\)",'@ref$/);
    const res = await svc.as(m, { method: 'GET', url: '/api/getBalanceHistory?currency=USD', headers: { accept: 'text/csv' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('id,createdAt,currency,kind,availableChange,heldChange,incomingChange,available,held,incoming,transactionId,reason,reference');
    expect(lines).toHaveLength(6); // header, 4 entries, the final CRLF
    expect(lines[2]).toContain(',USD,withdraw.hold,-2.34,2.34,0,10.00,2.34,0.00,');
  });

  it('downloads every matching entry whatever the cursor, and refuses a cursor this API did not issue', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '3');
    await ledger.fund(m, '4');
    const first = (await ledger.history(m, '?limit=1')).json();
    expect(first.nextCursor).toEqual(expect.any(String));
    const csv = async (q: string) => svc.as(m, { method: 'GET', url: `/api/getBalanceHistory${q}`, headers: { accept: 'text/csv' } });
    const whole = await csv('');
    const withCursor = await csv(`?limit=1&cursor=${first.nextCursor}`);
    expect(withCursor.statusCode).toBe(200);
    expect(withCursor.body).toBe(whole.body);
    expect(whole.body.split('\r\n')).toHaveLength(6); // header, 4 entries, the final CRLF

    const forged = await csv('?cursor=bm9wZQ');
    expect(forged.statusCode).toBe(400);
    expect(forged.json().errors).toEqual([{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }]);
  });
});

describe('a transaction in the detail view', () => {
  it('carries the ledger entries it wrote, in order', async () => {
    const m = await ledger.merchant();
    const d = await ledger.create(m, 'deposit', '9.99');
    await ledger.setStatus(d.json().id, 'processing');
    await ledger.setStatus(d.json().id, 'completed');
    const res = await svc.as(m, { method: 'GET', url: `/api/transactions/${d.json().id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().ledgerEntries.map((e: { kind: string; available: string }) => [e.kind, e.available])).toEqual([
      ['deposit.pending', '0'],
      ['deposit.completed', '9.99'],
    ]);
  });
});
