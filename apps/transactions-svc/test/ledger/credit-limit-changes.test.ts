/**
 * Changing a credit limit while the merchant's money moves (docs/money.md, "Operators"): a limit never
 * lets a balance go below -creditLimit, whether it is lowered below what a balance already uses, or
 * the default changes while a create is making the row of a currency's first use (found by an
 * outside audit: that row kept the old default, and a withdraw past the new one was accepted).
 */
import fc from 'fast-check';
import pg from 'pg';
import { adjustBalance, LedgerCommandError, setCreditLimit } from '../../src/domain/ledger-admin';
import { verifyLedger } from '../../src/domain/ledger-verify';
import { startTestService, type TestService } from '../support/service';
import { ledgerClient, problemOf } from './support';

let svc: TestService;
let ledger: ReturnType<typeof ledgerClient>;
let other: pg.Client;
beforeAll(async () => {
  svc = await startTestService('credit-limit-changes');
  ledger = ledgerClient(svc);
  other = new pg.Client({ connectionString: svc.url });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await svc?.close();
});

const copyOf = async (merchant: string, currency: string) =>
  (await svc.pool.query<{ credit_limit: string }>('SELECT credit_limit::text FROM balances WHERE merchant_id = $1 AND currency = $2', [merchant, currency]))
    .rows[0]?.credit_limit;

describe('a limit below what a balance already uses', () => {
  it('is refused for one currency, naming the lowest limit it allows now, and the limit in force stays', async () => {
    const m = await ledger.merchant('100');
    expect((await ledger.create(m, 'withdraw', '60', 'USD')).statusCode).toBe(201); // available -60
    await expect(setCreditLimit(svc.pool, m, '59.99', 'USD')).rejects.toThrow(
      new LedgerCommandError('refused: USD available is -60, below -59.99; the lowest limit it allows now is 60'),
    );
    expect(await ledger.balance(m, 'USD')).toMatchObject({ available: '-60', creditLimit: '100' });
    await setCreditLimit(svc.pool, m, '60', 'USD'); // no further credit: allowed
    expect(await ledger.balance(m, 'USD')).toMatchObject({ available: '-60', creditLimit: '60' });
    expect((await ledger.create(m, 'withdraw', '0.01', 'USD')).statusCode).toBe(422);
  });

  it('is refused as a default when a currency that follows it uses more, but not for a currency with a limit of its own', async () => {
    const m = await ledger.merchant('100');
    expect((await ledger.create(m, 'withdraw', '30', 'EUR')).statusCode).toBe(201);
    expect((await ledger.create(m, 'withdraw', '80', 'GBP')).statusCode).toBe(201);
    await expect(setCreditLimit(svc.pool, m, '50', null)).rejects.toThrow('refused: GBP available is -80, below -50; the lowest default it allows now is 80');
    await setCreditLimit(svc.pool, m, '80', 'GBP'); // GBP has its own now
    await setCreditLimit(svc.pool, m, '30', null);
    expect(await ledger.balance(m, 'EUR')).toMatchObject({ available: '-30', creditLimit: '30' });
    expect(await ledger.balance(m, 'GBP')).toMatchObject({ available: '-80', creditLimit: '80' });
  });

  it('names the balance that uses the most, so the limit it names is allowed (by number, not text)', async () => {
    const m = await ledger.merchant('1000');
    for (const [currency, amount] of [['AAA', '300'], ['BBB', '700'], ['CCC', '500']] as const) {
      expect((await ledger.create(m, 'withdraw', amount, currency)).statusCode).toBe(201);
    }
    await expect(setCreditLimit(svc.pool, m, '100', null)).rejects.toThrow(
      new LedgerCommandError('refused: BBB available is -700, below -100; the lowest default it allows now is 700'),
    );
    await setCreditLimit(svc.pool, m, '700', null);
    await expect(setCreditLimit(svc.pool, m, '0', 'CCC')).rejects.toThrow('refused: CCC available is -500, below 0; the lowest limit it allows now is 500');
  });
});

describe('the default changing while a currency is first used', () => {
  it('a row made with the old default while the change waits for a balance lock follows the new default', async () => {
    const m = await ledger.merchant('100');
    await ledger.fund(m, '1.00', 'USD');
    // Another writer holds the USD balance (a withdraw in flight, say): the change waits for it.
    await other.query('BEGIN');
    await other.query('SELECT 1 FROM balances WHERE merchant_id = $1 AND currency = $2 FOR UPDATE', [m, 'USD']);
    const change = setCreditLimit(svc.pool, m, '0', null);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ledger.create(m, 'deposit', '1.00', 'EUR')).statusCode).toBe(201); // EUR's first use
    await other.query('COMMIT');
    await change;
    expect(await ledger.balance(m, 'EUR')).toMatchObject({ creditLimit: '0' });
    const refused = await ledger.create(m, 'withdraw', '101.00', 'EUR');
    expect(refused.statusCode).toBe(422);
    expect(problemOf(refused).code).toBe('insufficient_funds');
  });

  it('a row whose copy of the default is older and higher never grants more than the default', async () => {
    const m = await ledger.merchant('0');
    expect((await ledger.create(m, 'deposit', '5', 'CHF')).statusCode).toBe(201);
    // As a create that read the default before an operator lowered it would leave it.
    await svc.pool.query('UPDATE balances SET credit_limit = 100 WHERE merchant_id = $1 AND currency = $2', [m, 'CHF']);
    expect(await ledger.balance(m, 'CHF')).toMatchObject({ available: '0', creditLimit: '0' });
    expect((await ledger.create(m, 'withdraw', '0.01', 'CHF')).statusCode).toBe(422);
  });

  it('a row made by a statement that read the default before a raise committed gets the raised default once that statement is done', async () => {
    const m = await ledger.merchant('10');
    // A create's statement that read the default before the change committed and made the row after.
    const slowFirstUse = other.query(
      `INSERT INTO balances (merchant_id, currency, credit_limit)
       SELECT m.id, 'JPY', m.credit_limit FROM merchants m, LATERAL (SELECT pg_sleep(0.8)) s WHERE m.id = $1`,
      [m],
    );
    await new Promise((r) => setTimeout(r, 200));
    await setCreditLimit(svc.pool, m, '250', null);
    await slowFirstUse;
    expect(await copyOf(m, 'JPY')).toBe('250');
    expect((await ledger.create(m, 'withdraw', '250', 'JPY')).statusCode).toBe(201);
  });
});

describe('the default lowered while a currency is first used and spent on the old default', () => {
  it('is refused when the new row, not yet committed when the change began, uses more than the new default', async () => {
    const m = await ledger.merchant('100');
    // Stretches this one adjustment's entry: it has made the GBP row (the currency cap's trigger holds
    // the merchant's row) and judged the debit on the old default of 100 when the change begins.
    await svc.pool.query(`
      CREATE OR REPLACE FUNCTION test_slow_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.reference = 'slow-first-use' THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$;
      CREATE TRIGGER test_slow_entry BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION test_slow_entry();`);
    try {
      const debit = adjustBalance(svc.pool, { merchantId: m, currency: 'GBP', amount: '-80', reason: 'fee', reference: 'slow-first-use', actor: 'test' });
      await new Promise((r) => setTimeout(r, 300));
      const change = setCreditLimit(svc.pool, m, '50', null);
      await debit;
      await expect(change).rejects.toThrow(new LedgerCommandError('refused: GBP available is -80, below -50; the lowest default it allows now is 80'));
    } finally {
      await svc.pool.query('DROP TRIGGER test_slow_entry ON ledger_entries; DROP FUNCTION test_slow_entry()');
    }
    expect(await ledger.balance(m, 'GBP')).toMatchObject({ available: '-80', creditLimit: '100' });
    expect((await verifyLedger(svc.pool)).ok).toBe(true);
  });
});

describe('limits changed while withdraws run, drawn by fast-check', () => {
  type Op = { op: 'withdraw'; currency: number; cents: number } | { op: 'default' | 'own'; currency: number; cents: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('withdraw' as const), currency: fc.nat(1), cents: fc.integer({ min: 1, max: 5_000 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('default' as const), currency: fc.nat(1), cents: fc.nat(20_000) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('own' as const), currency: fc.nat(1), cents: fc.nat(20_000) }) },
  );
  const decimal = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
  const CURRENCIES = ['USD', 'EUR'];

  it('never leaves a balance below -creditLimit, and the ledger recounts clean', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 3, maxLength: 10 }), { minLength: 5, maxLength: 5 }), fc.nat(20_000), async (clients, start) => {
        const m = await ledger.merchant(decimal(start));
        for (const currency of CURRENCIES) await ledger.fund(m, '1.00', currency); // each row exists before the race
        await Promise.all(
          clients.map(async (ops) => {
            for (const o of ops) {
              const currency = CURRENCIES[o.currency]!;
              if (o.op === 'withdraw') {
                expect([201, 422]).toContain((await ledger.create(m, 'withdraw', decimal(o.cents), currency)).statusCode);
              } else {
                await setCreditLimit(svc.pool, m, decimal(o.cents), o.op === 'own' ? currency : null).catch((error: unknown) => {
                  if (!(error instanceof LedgerCommandError)) throw error; // a limit below what is used: refused
                });
              }
            }
          }),
        );
        for (const currency of CURRENCIES) {
          const b = (await ledger.balance(m, currency))!;
          expect(Number(b.available) + Number(b.creditLimit)).toBeGreaterThanOrEqual(-1e-9); // values of 2 decimals
        }
        const report = await verifyLedger(svc.pool);
        expect(report.ok).toBe(true);
      }),
      { numRuns: 12 },
    );
  });
});
