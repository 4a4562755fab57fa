/**
 * The operator's money commands, run as an operator runs them (their own processes): merchant
 * create --credit-limit, set-credit-limit, adjust-balance, and ledger verify.
 */
import { startBalanceCheckJob } from '../../src/ledger/balance-check-job';
import { removeCliBuild, runCli } from '../cli/run-cli';
import { startTestService, type TestService } from '../support/service';
import { ledgerClient } from './support';

let svc: TestService;
let ledger: ReturnType<typeof ledgerClient>;
beforeAll(async () => {
  svc = await startTestService('ledger-cli');
  ledger = ledgerClient(svc);
});
afterAll(async () => {
  removeCliBuild();
  await svc?.close();
});

const merchantCli = (...args: string[]) => runCli('merchant', args, { DATABASE_URL: svc.url });
const verify = () => runCli('ledger', ['verify'], { DATABASE_URL: svc.url });

function oneJsonLine(stdout: string) {
  const lines = stdout.split('\n');
  expect(lines).toHaveLength(2);
  return JSON.parse(lines[0]!);
}

describe('merchant create --credit-limit', () => {
  it('gives the merchant a default credit limit for every currency', async () => {
    const res = await merchantCli('create', '--name', 'Credit Ltd', '--credit-limit', '150.25');
    expect(res.code).toBe(0);
    const { merchantId } = oneJsonLine(res.stdout);
    expect(Object.keys(oneJsonLine(res.stdout))).toEqual(['merchantId', 'apiToken', 'callbackSigningSecret']);
    expect((await ledger.create(merchantId, 'withdraw', '150.26', 'EUR')).statusCode).toBe(422);
    expect((await ledger.create(merchantId, 'withdraw', '150.25', 'EUR')).statusCode).toBe(201);
    expect(await ledger.balance(merchantId, 'EUR')).toMatchObject({ available: '-150.25', creditLimit: '150.25' });
  });

  it.each([['-1'], ['1e3'], ['abc'], ['1.123456789'], [' 5'], ['5\t']])('refuses --credit-limit %j with exit 2', async (limit) => {
    const res = await merchantCli('create', '--name', 'X', '--credit-limit', limit);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('--credit-limit');
  });
});

describe('merchant set-credit-limit', () => {
  it('sets one currency apart from the default, and the default for the others', async () => {
    const m = await ledger.merchant();
    const usd = await merchantCli('set-credit-limit', '--merchant', m, '--limit', '10', '--currency', 'USD');
    expect(usd.code).toBe(0);
    expect(oneJsonLine(usd.stdout)).toEqual({ merchantId: m, currency: 'USD', creditLimit: '10' });
    const all = await merchantCli('set-credit-limit', '--merchant', m, '--limit', '3');
    expect(oneJsonLine(all.stdout)).toEqual({ merchantId: m, currency: null, creditLimit: '3' });
    expect((await ledger.create(m, 'withdraw', '10', 'USD')).statusCode).toBe(201);
    expect((await ledger.create(m, 'withdraw', '3.01', 'EUR')).statusCode).toBe(422);
    expect((await ledger.create(m, 'withdraw', '3', 'EUR')).statusCode).toBe(201);
  });

  it('prints the limit as it is stored, without leading zeros', async () => {
    const m = await ledger.merchant();
    const res = await merchantCli('set-credit-limit', '--merchant', m, '--limit', '007.50', '--currency', 'USD');
    expect(oneJsonLine(res.stdout)).toEqual({ merchantId: m, currency: 'USD', creditLimit: '7.50' });
  });

  it('fails with exit 1 and a message for an unknown merchant', async () => {
    const res = await merchantCli('set-credit-limit', '--merchant', '00000000-0000-4000-8000-000000000000', '--limit', '1');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no merchant with id');
  });
});

describe('merchant adjust-balance', () => {
  const adjust = (m: string, amount: string, reference: string, reason = 'chargeback reversal') =>
    merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', `--amount=${amount}`, '--reason', reason, '--reference', reference, '--actor', 'ops@example');

  it('writes one adjustment entry with who and why, idempotent by reference', async () => {
    const m = await ledger.merchant();
    const res = await adjust(m, '25.50', 'ref-1');
    expect(res.code).toBe(0);
    const out = oneJsonLine(res.stdout);
    expect(out).toMatchObject({
      merchantId: m,
      replayed: false,
      entry: { kind: 'adjustment', currency: 'USD', change: { available: '25.50', held: '0', incoming: '0' }, available: '25.50', reason: 'chargeback reversal', reference: 'ref-1', transactionId: null },
    });
    const again = oneJsonLine((await adjust(m, '25.50', 'ref-1')).stdout);
    expect(again).toEqual({ ...out, replayed: true });
    expect(await ledger.balance(m)).toMatchObject({ available: '25.50' });
    const { rows } = await svc.pool.query('SELECT actor FROM ledger_entries WHERE merchant_id = $1', [m]);
    expect(rows).toEqual([{ actor: 'ops@example' }]);
    const other = await adjust(m, '99', 'ref-1');
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('reference ref-1 was used');
  });

  it('takes a signed amount as its own argument, as the usage writes it (--amount -2.50, --amount +1.25)', async () => {
    const m = await ledger.merchant();
    await adjust(m, '10', 'in');
    const res = await merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', '--amount', '-2.50', '--reason', 'fee', '--reference', 'fee-1');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(oneJsonLine(res.stdout).entry).toMatchObject({ change: { available: '-2.50' }, available: '7.50', reference: 'fee-1' });
    // An explicit plus sign is a credit, and the same as no sign for a replay.
    const plus = await merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', '--amount', '+1.25', '--reason', 'refund', '--reference', 'refund-1');
    expect(oneJsonLine(plus.stdout)).toMatchObject({ entry: { change: { available: '1.25' }, available: '8.75' }, replayed: false });
    expect(oneJsonLine((await adjust(m, '1.25', 'refund-1', 'refund')).stdout)).toMatchObject({ replayed: true });
    // A negative limit is refused for what it is, not as a misread option.
    const limit = await merchantCli('set-credit-limit', '--merchant', m, '--limit', '-1');
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/--limit must be/);
  });

  it('refuses an adjustment that would take available below -creditLimit, and allows one down to it', async () => {
    const m = await ledger.merchant('5');
    await adjust(m, '10', 'in');
    const refused = await adjust(m, '-15.01', 'out-1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refused');
    expect(await ledger.balance(m)).toMatchObject({ available: '10' });
    const taken = await adjust(m, '-15', 'out-2');
    expect(taken.code).toBe(0);
    expect(oneJsonLine(taken.stdout).entry.change.available).toBe('-15');
    expect(await ledger.balance(m)).toMatchObject({ available: '-5' });
  });

  it('takes a credit however far below -creditLimit the balance is, so it can be brought back in steps', async () => {
    const m = await ledger.merchant('5');
    expect((await adjust(m, '-5', 'down')).code).toBe(0);
    // A limit below what the balance uses is refused; such a balance is left only by history from
    // before the ledger (docs/money.md), made here by hand.
    const lowered = await merchantCli('set-credit-limit', '--merchant', m, '--limit', '2', '--currency', 'USD');
    expect(lowered.code).toBe(1);
    expect(lowered.stderr).toContain('refused: USD available is -5, below -2; the lowest limit it allows now is 5');
    await svc.pool.query('UPDATE balances SET credit_limit = 2, credit_limit_set = true WHERE merchant_id = $1', [m]);
    const partly = await adjust(m, '1', 'back-1');
    expect(partly.code).toBe(0);
    expect(await ledger.balance(m)).toMatchObject({ available: '-4', creditLimit: '2' });
    const debit = await adjust(m, '-0.01', 'out-again');
    expect(debit.code).toBe(1);
    expect(debit.stderr).toContain('refused: -0.01 USD would take available below the credit limit (at most 0 can be taken)');
    expect(await ledger.balance(m)).toMatchObject({ available: '-4' });
  });

  it('counts --reason, --reference and --actor in characters, as the database does, not in UTF-16 units', async () => {
    const m = await ledger.merchant();
    const reference = `😀${'x'.repeat(127)}`; // 128 characters, 129 UTF-16 units
    const res = await merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', '--amount', '1', '--reason', '😀'.repeat(500), '--reference', reference, '--actor', '😀'.repeat(200));
    expect(res.stderr).toBe('');
    expect(oneJsonLine(res.stdout).entry).toMatchObject({ reference, reason: '😀'.repeat(500) });
    const tooLong = await merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', '--amount', '1', '--reason', 'r', '--reference', `${reference}x`);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('--reference must be 1–128 printable characters');
  });

  it.each([
    [['--amount', '0'], '--amount'],
    [['--amount', '1', '--reason', ''], '--reason'],
    [['--amount', '1', '--reference', ''], '--reference'],
    // Never trimmed into a value the operator did not type.
    [['--amount', ' 5'], '--amount must not begin or end with white space'],
    [['--amount', '1', '--reason', '\ttab'], '--reason must not begin or end with white space'],
    [['--amount', '1', '--reference', 'R-1 '], '--reference must not begin or end with white space'],
  ])('refuses bad input %j with exit 2, writing nothing', async (args, named) => {
    const m = await ledger.merchant();
    const base: Record<string, string> = { '--amount': '1', '--reason': 'r', '--reference': 'x' };
    for (let i = 0; i < args.length; i += 2) base[args[i]!] = args[i + 1]!;
    const res = await merchantCli('adjust-balance', '--merchant', m, '--currency', 'USD', ...Object.entries(base).flat());
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(named);
    expect((await svc.pool.query('SELECT count(*)::int AS n FROM ledger_entries WHERE merchant_id = $1', [m])).rows[0].n).toBe(0);
  });
});

describe('ledger verify', () => {
  it.each([
    [['verify', '--bogus'], 'unexpected argument --bogus (verify takes none)'],
    [['check'], 'unknown command check'],
    [[], 'missing command (verify)'],
  ])('refuses %j with exit 2, naming what is wrong', async (args, message) => {
    const res = await runCli('ledger', args, { DATABASE_URL: svc.url });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`ledger: ${message}`);
  });

  it('says in its one JSON line, and on stderr, when it could not check at all, and exits 1', async () => {
    const res = await runCli('ledger', ['verify'], { DATABASE_URL: 'postgresql://postgres@127.0.0.1:9/none' });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual({ ok: false, error: expect.stringContaining('PostgreSQL is not reachable at 127.0.0.1:9') });
    expect(res.stderr).toContain('ledger: PostgreSQL is not reachable at 127.0.0.1:9');
  });

  it('prints ok for a ledger written by the service, and names what differs after tampering', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '40');
    const w = await ledger.create(m, 'withdraw', '15');
    await ledger.setStatus(w.json().id, 'failed');
    const ok = await verify();
    expect(ok.code).toBe(0);
    expect(oneJsonLine(ok.stdout)).toMatchObject({ ok: true, differences: { balances: [], chain: [], postings: [], transactions: [] } });

    // A balance changed behind the ledger's back (entries themselves cannot be changed).
    await svc.pool.query("UPDATE balances SET available = available + 1 WHERE merchant_id = $1", [m]);
    const bad = await verify();
    expect(bad.code).toBe(1);
    const report = oneJsonLine(bad.stdout);
    expect(report.ok).toBe(false);
    expect(report.differences.balances).toEqual([
      {
        merchantId: m,
        currency: 'USD',
        stored: { available: '41', held: '0', incoming: '0', entries: '4' },
        fromEntries: { available: '40', held: '0', incoming: '0', entries: '4' },
      },
    ]);
    await svc.pool.query("UPDATE balances SET available = available - 1 WHERE merchant_id = $1", [m]);
  });

  it('finds a status change that has no entry', async () => {
    const m = await ledger.merchant();
    const d = await ledger.create(m, 'deposit', '3');
    // Moved by hand, outside the statement that writes the entry.
    await svc.pool.query("UPDATE transactions SET status = 'completed' WHERE id = $1", [d.json().id]);
    const report = oneJsonLine((await verify()).stdout);
    expect(report.differences.transactions).toEqual([{ transactionId: d.json().id, kind: 'deposit.completed', problem: 'missing' }]);
    await svc.pool.query("UPDATE transactions SET status = 'pending' WHERE id = $1", [d.json().id]);
  });
});

describe("the service's periodic balance check", () => {
  it('counts the balances that differ from their newest entry and logs each by merchant and currency, with both sides', async () => {
    const m = await ledger.merchant();
    await ledger.fund(m, '12.50', 'EUR');
    const warnings: { obj: object; msg: string }[] = [];
    const job = startBalanceCheckJob(svc.pool, { warn: (obj, msg) => warnings.push({ obj, msg }) }, 3_600_000);
    try {
      expect(await job.check()).toBe(0);
      expect(warnings).toEqual([]);

      await svc.pool.query("UPDATE balances SET held = held + 0.01 WHERE merchant_id = $1 AND currency = 'EUR'", [m]);
      expect(await job.check()).toBe(1);
      expect(warnings).toEqual([
        {
          msg: expect.stringMatching(/ledger:verify/),
          obj: {
            differing: 1,
            examples: [
              {
                merchantId: m,
                currency: 'EUR',
                stored: { available: '12.50', held: '0.01', incoming: '0.00', entries: '2' },
                newestEntry: { available: '12.50', held: '0', incoming: '0.00', seq: '2' },
              },
            ],
          },
        },
      ]);
    } finally {
      await svc.pool.query("UPDATE balances SET held = held - 0.01 WHERE merchant_id = $1 AND currency = 'EUR'", [m]);
      await job.stop();
    }
  });
});

describe('the ledger is append-only', () => {
  it.each(['UPDATE ledger_entries SET amount = amount + 1', 'DELETE FROM ledger_entries', 'TRUNCATE ledger_entries'])('refuses %s', async (statement) => {
    await expect(svc.pool.query(statement)).rejects.toThrow(/append-only/);
  });
});
