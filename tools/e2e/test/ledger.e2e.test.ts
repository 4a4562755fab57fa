/**
 * Money through the gateway and the real processes (docs/money.md): a withdraw before any deposit is
 * refused with 422 insufficient_funds and writes nothing; a deposit the sandbox settler completes
 * makes funds available and a withdraw then holds them; 40 simultaneous withdraws of 1.00 against
 * 10.00 admit exactly 10; the balance, the statement and its CSV; the OpenAPI document. The stack's
 * close() runs ledger:verify on what the test left.
 */
import { ADMIN_TOKEN, api, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let merchant: Merchant;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  // The sandbox settler completes deposits (and withdraws) 300 ms after creation, as npm start's does after 3 s.
  stack = await startStack('ledger', { RATE_LIMIT_PER_SECOND: '1000', SANDBOX_SETTLE_MS: '300' });
  merchant = stack.createMerchant('Money merchant', '0');
  call = api(stack, merchant.apiToken);
});
afterAll(async () => stack?.close());

async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const balance = async (currency = 'USD') =>
  ((await call('GET', '/api/getBalance')).json.balances as Record<string, string>[]).find((b) => b.currency === currency);

describe('a withdraw is paid only from what the merchant holds', () => {
  it('refuses a withdraw before any deposit, then pays it once a deposit has settled', async () => {
    const withdraw = { amount: '60.25', currency: 'USD', orderId: 'payout-1', destination: 'acct-9' };
    const refused = await call('POST', '/api/createWithdraw', withdraw, { 'x-request-id': 'req-funds-1' });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.json).toMatchObject({ status: 422, code: 'insufficient_funds', title: 'Insufficient funds', requestId: 'req-funds-1' });
    expect(refused.json.detail).toMatch(/USD.*60\.25.*at most 0 USD/);
    const list = await call('GET', '/ui/viewTransaction?type=withdraw', undefined, { accept: 'application/json' });
    expect(list.json.items).toEqual([]);

    const deposit = await call('POST', '/api/createDeposit', { amount: '100.50', currency: 'USD', orderId: 'dep-1' });
    expect(deposit.status).toBe(201);
    const settled = await eventually(balance, (b) => b?.available === '100.50');
    expect(settled).toEqual({ currency: 'USD', available: '100.50', held: '0', incoming: '0.00', creditLimit: '0' });

    const paid = await call('POST', '/api/createWithdraw', withdraw);
    expect(paid.status).toBe(201);
    expect((await balance())!.available).toBe('40.25'); // held until the settler completes it
    const completed = await eventually(balance, (b) => b?.held === '0.00');
    expect(completed).toMatchObject({ available: '40.25', held: '0.00', incoming: '0.00' });

    const history = await call('GET', '/api/getBalanceHistory?currency=USD');
    expect(history.status).toBe(200);
    expect(history.json.items.map((e: { kind: string }) => e.kind)).toEqual(['withdraw.completed', 'withdraw.hold', 'deposit.completed', 'deposit.pending']);
    const csv = await call('GET', '/api/getBalanceHistory', undefined, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text.split('\r\n')).toHaveLength(6);
    // The statement's CSV only where Accept prefers it, as for the transaction list: ranked below
    // JSON, below a wildcard, or refused with q=0, the answer is a JSON page (and takes no download slot).
    for (const accept of ['text/csv;q=0.5, application/json', 'text/csv;q=0.9, */*', 'text/csv;q=0']) {
      const page = await call('GET', '/api/getBalanceHistory?currency=USD', undefined, { accept });
      expect([accept, page.status, page.headers.get('content-type')]).toEqual([accept, 200, expect.stringMatching(/^application\/json/)]);
      expect(page.json.items).toHaveLength(4);
    }
  });

  it('admits exactly 10 of 40 simultaneous withdraws of 1.00 against 10.00', async () => {
    const m = stack.createMerchant('Forty', '0');
    const c = api(stack, m.apiToken);
    const res = await fetch(`${stack.transactions}/internal/transactions/${(await c('POST', '/api/createDeposit', { amount: '10.00', currency: 'EUR', orderId: 'd' })).json.id}/status`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'completed' }),
    });
    expect([200, 409]).toContain(res.status); // the settler may have been first
    await eventually(async () => ((await c('GET', '/api/getBalance')).json.balances as Record<string, string>[])[0], (b) => b?.available === '10.00');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => c('POST', '/api/createWithdraw', { amount: '1.00', currency: 'EUR', orderId: `w-${i}`, destination: 'acct' })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 422)).toHaveLength(30);
    const [eur] = (await c('GET', '/api/getBalance')).json.balances as Record<string, string>[];
    expect(eur!.available).toBe('0.00'); // all of it held, or paid out once the settler completes them
  });
});

describe('the OpenAPI document', () => {
  it('publishes getBalance, getBalanceHistory and the 422 insufficient_funds problem', async () => {
    const doc = (await call('GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/getBalance', '/api/getBalanceHistory']));
    expect(JSON.stringify(doc)).toContain('insufficient_funds');
  });
});
