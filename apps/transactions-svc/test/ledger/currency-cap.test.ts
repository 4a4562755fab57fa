/**
 * A merchant holds balances in at most 1,000 currencies (docs/money.md, "Currencies"): the first use
 * of one more is refused with 400 naming `currency`, writing nothing, exactly at the cap under any
 * concurrency, and without costing another merchant's creates in the same batch anything.
 */
import { MAX_CURRENCIES_PER_MERCHANT } from '../../src/domain/currency-cap';
import { removeCliBuild, runCli } from '../cli/run-cli';
import { rowCounts, startTestService, type TestService } from '../support/service';
import { ledgerClient, problemOf } from './support';

let svc: TestService;
let ledger: ReturnType<typeof ledgerClient>;
beforeAll(async () => {
  svc = await startTestService('ledger-currency-cap');
  ledger = ledgerClient(svc);
});
afterAll(async () => {
  removeCliBuild();
  await svc?.close();
});

/** Balance rows in `n` currencies K00001…, as refused withdraws or an operator's credit limits leave them (no entry yet). */
async function holdCurrencies(merchant: string, n: number): Promise<void> {
  await svc.pool.query(
    `INSERT INTO balances (merchant_id, currency, credit_limit)
     SELECT m.id, 'K' || lpad(g::text, 5, '0'), m.credit_limit FROM merchants m, generate_series(1, $2::int) g WHERE m.id = $1`,
    [merchant, n],
  );
}
const currencies = async (merchant: string) =>
  Number((await svc.pool.query('SELECT count(*) AS n FROM balances WHERE merchant_id = $1', [merchant])).rows[0].n);

describe(`a merchant's currencies, at most ${MAX_CURRENCIES_PER_MERCHANT}`, () => {
  it('admits the last one, then refuses a deposit in one more with 400 naming currency, writing nothing', async () => {
    const m = await ledger.merchant();
    await holdCurrencies(m, MAX_CURRENCIES_PER_MERCHANT - 1);
    expect((await ledger.create(m, 'deposit', '1.00', 'LAST')).statusCode).toBe(201);
    expect(await currencies(m)).toBe(MAX_CURRENCIES_PER_MERCHANT);

    const before = await rowCounts(svc.db);
    const refused = await ledger.create(m, 'deposit', '1.00', 'ONEMORE');
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = refused.json();
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors).toEqual([{ path: '/currency', message: expect.stringContaining(String(MAX_CURRENCIES_PER_MERCHANT)) }]);
    expect(problem.detail).toContain('Nothing was created');
    expect(await rowCounts(svc.db)).toEqual(before);
    expect(await currencies(m)).toBe(MAX_CURRENCIES_PER_MERCHANT);

    // Every currency it holds still takes deposits.
    expect((await ledger.create(m, 'deposit', '2.00', 'LAST')).statusCode).toBe(201);
    expect((await ledger.create(m, 'deposit', '2.00', 'K00001')).statusCode).toBe(201);
  });

  it.each(['100', '0'])('refuses a withdraw in one more currency the same way, with a credit limit of %s', async (creditLimit) => {
    const m = await ledger.merchant(creditLimit);
    await holdCurrencies(m, MAX_CURRENCIES_PER_MERCHANT);
    const before = await rowCounts(svc.db);
    const refused = await ledger.create(m, 'withdraw', '1.00', 'ONEMORE');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([{ path: '/currency', message: expect.any(String) }]);
    expect(await rowCounts(svc.db)).toEqual(before);
    // Within a currency it holds, the credit limit applies as ever.
    expect((await ledger.create(m, 'withdraw', '1.00', 'K00002')).statusCode).toBe(creditLimit === '0' ? 422 : 201);
  });

  it('one below the cap, refuses a withdraw beyond its funds in a new currency with 422, and asking the cap leaves no balance row', async () => {
    const m = await ledger.merchant('0');
    await holdCurrencies(m, MAX_CURRENCIES_PER_MERCHANT - 1);
    const before = await rowCounts(svc.db);
    const refused = await ledger.create(m, 'withdraw', '1.00', 'ONEMORE');
    expect(refused.statusCode).toBe(422);
    expect(problemOf(refused).code).toBe('insufficient_funds');
    expect(await rowCounts(svc.db)).toEqual(before);
    expect(await currencies(m)).toBe(MAX_CURRENCIES_PER_MERCHANT - 1);
    // The currency is still free to take: a deposit in it is the last one admitted.
    expect((await ledger.create(m, 'deposit', '1.00', 'ONEMORE')).statusCode).toBe(201);
    expect(await currencies(m)).toBe(MAX_CURRENCIES_PER_MERCHANT);
  });

  it('admits exactly the currencies left when many first uses come at once, and refuses none of another merchant’s creates beside them', async () => {
    const m = await ledger.merchant();
    const other = await ledger.merchant();
    await holdCurrencies(m, MAX_CURRENCIES_PER_MERCHANT - 5);
    const mine = Array.from({ length: 20 }, (_, i) => ledger.create(m, 'deposit', '1.00', `NEW${String(i).padStart(2, '0')}`));
    const theirs = Array.from({ length: 20 }, () => ledger.create(other, 'deposit', '1.00', 'USD'));
    const [a, b] = await Promise.all([Promise.all(mine), Promise.all(theirs)]);
    expect(a.filter((r) => r.statusCode === 201)).toHaveLength(5);
    expect(a.filter((r) => r.statusCode === 400)).toHaveLength(15);
    for (const r of a.filter((res) => res.statusCode === 400)) expect(problemOf(r).code).toBe('validation_failed');
    expect(b.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    expect(await currencies(m)).toBe(MAX_CURRENCIES_PER_MERCHANT);
  });

  it('holds for an operator too: a balance row in one more currency is refused by the database itself', async () => {
    const m = await ledger.merchant();
    await holdCurrencies(m, MAX_CURRENCIES_PER_MERCHANT);
    await expect(svc.pool.query(`INSERT INTO balances (merchant_id, currency) VALUES ($1, 'OPERATOR')`, [m])).rejects.toMatchObject({ code: '23L01' });
    // The operator's command says so as the API does, not as a fault of the database's connection.
    const adjusted = await runCli('merchant', ['adjust-balance', '--merchant', m, '--currency', 'OPERATOR', '--amount', '1', '--reason', 'r', '--reference', 'cap-1'], {
      DATABASE_URL: svc.url,
    });
    expect(adjusted.code).toBe(1);
    expect(adjusted.stderr).toContain('refused: the merchant already holds balances in 1000 currencies, the most one merchant may; use one of them');
    expect(adjusted.stderr).not.toContain('PostgreSQL at');
  }, 60_000);
});
