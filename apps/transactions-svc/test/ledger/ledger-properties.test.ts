/**
 * The ledger's invariants under any interleaving, proven against the real PostgreSQL: fast-check
 * draws operations for several concurrent clients (deposits, withdraws, replays, settlements and
 * failures, operator adjustments) on two merchants and two currencies; the clients run them at
 * once; then every invariant is checked against a model built from what was answered:
 * - available never went below -creditLimit (every entry's balance-after says so, in chain order);
 * - each balance equals the model's sum over the transactions' final statuses and the adjustments;
 * - every refused withdraw saw less than it asked; no replay held twice;
 * - ledger:verify's full recount finds nothing.
 */
import fc from 'fast-check';
import { adjustBalance } from '../../src/domain/ledger-admin';
import { verifyLedger } from '../../src/domain/ledger-verify';
import { startTestService, type TestService } from '../support/service';
import { ledgerClient, orderId } from './support';

let svc: TestService;
let ledger: ReturnType<typeof ledgerClient>;
beforeAll(async () => {
  svc = await startTestService('ledger-properties');
  ledger = ledgerClient(svc);
});
afterAll(async () => svc?.close());

const CURRENCIES = ['USD', 'EUR'] as const;
/** Amounts in hundredths as decimal strings: exact, and summed by the model in integers. */
const cents = fc.integer({ min: 1, max: 3_000 });
const toDecimal = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
const toCents = (d: string) => Math.round(Number(d) * 100); // test-side only, on values of 2 decimals

type Op =
  | { op: 'deposit' | 'withdraw'; merchant: number; currency: number; amount: number }
  | { op: 'replay'; pick: number }
  | { op: 'settle'; pick: number; to: 'completed' | 'failed' | 'processing' }
  | { op: 'adjust'; merchant: number; currency: number; amount: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('deposit' as const), merchant: fc.nat(1), currency: fc.nat(1), amount: cents }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('withdraw' as const), merchant: fc.nat(1), currency: fc.nat(1), amount: cents }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('replay' as const), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), to: fc.constantFrom('completed' as const, 'failed' as const, 'processing' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('adjust' as const), merchant: fc.nat(1), currency: fc.nat(1), amount: fc.integer({ min: -2_000, max: 2_000 }).filter((n) => n !== 0) }) },
);

interface Sent {
  merchant: string;
  type: 'deposit' | 'withdraw';
  amount: string;
  currency: string;
  orderId: string;
  id?: string;
}

it('keeps every invariant of the ledger under concurrent deposits, withdraws, replays, settlements and adjustments', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 5, maxLength: 20 }), { minLength: 6, maxLength: 6 }), fc.nat(2_000), async (clients, limitCents) => {
      const merchants = [await ledger.merchant(toDecimal(limitCents)), await ledger.merchant('0')];
      const sent: Sent[] = [];
      const adjustments: { merchant: string; currency: string; cents: number }[] = [];
      let refusals = 0;

      const run = async (ops: Op[]) => {
        for (const o of ops) {
          if (o.op === 'deposit' || o.op === 'withdraw') {
            const s: Sent = { merchant: merchants[o.merchant]!, type: o.op, amount: toDecimal(o.amount), currency: CURRENCIES[o.currency]!, orderId: orderId('p') };
            const res = await ledger.create(s.merchant, s.type, s.amount, s.currency, s.orderId);
            if (res.statusCode === 201) {
              s.id = res.json().id;
              sent.push(s);
            } else {
              expect(res.statusCode).toBe(422);
              expect(o.op).toBe('withdraw');
              const [, asked, withdrawable] = /asks (\S+) and at most (\S+) /.exec(res.json().detail)!;
              expect(toCents(withdrawable!)).toBeLessThan(toCents(asked!));
              refusals++;
            }
          } else if (o.op === 'replay' && sent.length) {
            const s = sent[o.pick % sent.length]!;
            const res = await ledger.create(s.merchant, s.type, s.amount, s.currency, s.orderId);
            expect(res.statusCode).toBe(200);
            expect(res.json().id).toBe(s.id);
          } else if (o.op === 'settle' && sent.length) {
            const res = await ledger.setStatus(sent[o.pick % sent.length]!.id!, o.to);
            expect([200, 409]).toContain(res.statusCode);
          } else if (o.op === 'adjust') {
            const merchant = merchants[o.merchant]!;
            const currency = CURRENCIES[o.currency]!;
            const amount = o.amount < 0 ? `-${toDecimal(-o.amount)}` : toDecimal(o.amount);
            try {
              await adjustBalance(svc.pool, { merchantId: merchant, currency, amount, reason: 'property test', reference: orderId('adj'), actor: 'test' });
              adjustments.push({ merchant, currency, cents: o.amount });
            } catch (err) {
              expect(String(err)).toMatch(/would take available below the credit limit/);
            }
          }
        }
      };
      await Promise.all(clients.map(run));

      // The model: each transaction's contribution by its final status, plus the adjustments.
      const { rows: finals } = await svc.pool.query<{ id: string; status: string }>('SELECT id, status::text FROM transactions WHERE merchant_id = ANY($1)', [merchants]);
      const status = new Map(finals.map((r) => [r.id, r.status]));
      for (const merchant of merchants) {
        for (const currency of CURRENCIES) {
          const model = { available: 0, held: 0, incoming: 0 };
          for (const s of sent.filter((x) => x.merchant === merchant && x.currency === currency)) {
            const c = toCents(s.amount);
            const st = status.get(s.id!)!;
            if (s.type === 'deposit') {
              if (st === 'completed') model.available += c;
              else if (st !== 'failed') model.incoming += c;
            } else if (st === 'completed') model.available -= c;
            else if (st !== 'failed') {
              model.available -= c;
              model.held += c;
            }
          }
          for (const a of adjustments.filter((x) => x.merchant === merchant && x.currency === currency)) model.available += a.cents;
          const balance = await ledger.balance(merchant, currency);
          const actual = balance
            ? { available: toCents(balance.available!), held: toCents(balance.held!), incoming: toCents(balance.incoming!) }
            : { available: 0, held: 0, incoming: 0 };
          expect(actual).toEqual(model);
        }
      }
      // available >= -creditLimit after every entry that could lower it, in chain order.
      const { rows: overdrawn } = await svc.pool.query(
        `SELECT e.kind, e.available::text, b.credit_limit::text FROM ledger_entries e JOIN balances b USING (merchant_id, currency)
          WHERE e.merchant_id = ANY($1) AND e.available < -b.credit_limit`,
        [merchants],
      );
      expect(overdrawn).toEqual([]);
      // One hold per created withdraw, however often it was replayed.
      const { rows: holds } = await svc.pool.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE merchant_id = ANY($1) AND kind = 'withdraw.hold'`, [merchants]);
      expect(holds[0].n).toBe(sent.filter((s) => s.type === 'withdraw').length);
      expect(refusals + sent.length).toBeGreaterThan(0);
      const report = await verifyLedger(svc.pool);
      expect(report.differences).toEqual({ balances: [], chain: [], postings: [], transactions: [] });
    }),
    { numRuns: Number(process.env.LEDGER_PROPERTY_RUNS ?? 8), endOnFailure: true, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
  );
}, 300_000);
