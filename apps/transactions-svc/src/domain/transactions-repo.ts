/**
 * Writes and reads of transactions. Every write goes through withEventsFor, so no status can change
 * without its event, delivery row and outbox message.
 */
import { groupCommit } from '@dw/batching';
import type { Transaction, TransactionStatusName, TransactionTypeName } from '@dw/contracts';
import { withSpan } from '@dw/telemetry';
import type pg from 'pg';
import { query, rolledBack, sql, type Sql } from '@dw/db';
import { ALLOWED_FROM } from './state-machine';
import { countEntries, withdrawsRefused } from '../ledger/ledger-metrics';
import { ringOutboxDoorbell } from '../outbox/doorbell';
import { isCurrencyCap } from './currency-cap';
import { CREDIT_LIMIT_IN_FORCE, ensureBalanceRow } from './ledger-sql';
import { retryDeadlock } from './retry-deadlock';
import { ROW_TRACEPARENT, transactionJson, withEventsFor } from './transaction-sql';

/**
 * Runs a withEventsFor statement (prepared when `name` is given), again when PostgreSQL ends it as
 * a deadlock's victim (retry-deadlock.ts: it changed nothing); when it wrote events (and so
 * outbox rows), wakes the relay.
 */
async function writeWithEvents(db: pg.Pool, statement: Sql, name?: string): Promise<{ tx: Transaction; merchant_id: string }[]> {
  const rows = await retryDeadlock(() => query<{ tx: Transaction; merchant_id: string }>(db, statement, name));
  if (rows.length > 0) ringOutboxDoorbell();
  countEntries(rows.map((r) => r.tx));
  return rows;
}

export interface NewTransaction {
  merchantId: string;
  type: TransactionTypeName;
  amount: string;
  currency: string;
  orderId: string;
  description: string | null;
  metadata: Record<string, string>;
  destination: string | null;
  traceparent: string | null;
}

export type CreateOutcome =
  | { kind: 'created'; transaction: Transaction }
  | { kind: 'replayed'; transaction: Transaction }
  | { kind: 'conflict'; transaction: Transaction }
  /** a withdraw past what may be spent: nothing was written; `asked` is the amount as it would have been stored, `withdrawable` what could be */
  | { kind: 'insufficient_funds'; asked: string; withdrawable: string }
  /** the first use of a currency beyond the merchant's MAX_CURRENCIES_PER_MERCHANT: nothing was written */
  | { kind: 'currency_limit' };

/**
 * Creates go to PostgreSQL in batches (group commit): the creates that arrive while a batch is being
 * written join the next one, and a batch is one prepared statement. At 50 concurrent creates this
 * cut PostgreSQL's CPU per create from about 600 µs (one statement each) to about 130 µs, measured
 * side by side (docs/benchmarks.md). An idle service writes each create at once: no timer, no wait.
 */
const BATCH = { maxBatch: 100, concurrency: 4 };
const creators = new WeakMap<pg.Pool, (t: NewTransaction) => Promise<Transaction | null>>();

function creatorFor(db: pg.Pool) {
  let create = creators.get(db);
  if (!create) {
    const batch = groupCommit((items: NewTransaction[]) => insertBatch(db, items), BATCH);
    create = async (t) => {
      const result = await batch(t);
      if (result instanceof Error) throw result;
      return result;
    };
    creators.set(db, create);
  }
  return create;
}

/**
 * The batch's rows, one unnest() column per field, so the statement's text never changes.
 *
 * Funds: the balances of the batch's merchants and currencies are locked first, in key order, and a
 * withdraw is written only when the withdraws of its balance up to it in the batch fit in what the
 * locked row says may be spent (available + creditLimit); its hold is then the ledger entry that
 * withEventsFor writes for it, in the same statement. A withdraw left out here is judged again by
 * createTransaction (refused, replayed, or tried again once earlier ones in its batch are known).
 * A withdraw whose balance has no row yet is left out too: createTransaction makes the row, so that
 * there is one to lock, and tries again.
 */
export function insertStatement(items: NewTransaction[]): Sql {
  const column = <K extends keyof NewTransaction>(k: K) => items.map((t) => t[k]);
  const insert = sql`
    INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, description, metadata,
                              destination, last_sequence, traceparent, created_at, updated_at)
    SELECT uuid_v7(), i.merchant_id, i.type, 'pending', i.amount, i.currency, i.order_id, i.description,
           i.metadata, i.destination, 1, i.traceparent, now(), now()
      FROM (SELECT u.*, sum(CASE WHEN u.type = 'withdraw' THEN u.amount ELSE 0 END)
                          OVER (PARTITION BY u.merchant_id, u.currency ORDER BY u.n) AS withdrawn
              FROM unnest(${column('merchantId')}::uuid[], ${column('type')}::transaction_type[], ${column('amount')}::numeric[],
                          ${column('currency')}::text[], ${column('orderId')}::text[], ${column('description')}::text[],
                          ${items.map((t) => JSON.stringify(t.metadata))}::jsonb[], ${column('destination')}::text[],
                          ${column('traceparent')}::text[])
                   WITH ORDINALITY AS u(merchant_id, type, amount, currency, order_id, description, metadata, destination, traceparent, n)
           ) i
      LEFT JOIN (SELECT b.merchant_id, b.currency, b.available + ${CREDIT_LIMIT_IN_FORCE} AS spendable
                   FROM balances b JOIN merchants m ON m.id = b.merchant_id
                  WHERE (b.merchant_id, b.currency) IN (SELECT * FROM unnest(${column('merchantId')}::uuid[], ${column('currency')}::text[]))
                  ORDER BY b.merchant_id, b.currency
                    FOR UPDATE OF b) f ON f.merchant_id = i.merchant_id AND f.currency = i.currency
     WHERE i.type = 'deposit' OR i.withdrawn <= f.spendable
     ORDER BY i.n
    ON CONFLICT (merchant_id, type, order_id) DO NOTHING
    RETURNING *`;
  return withEventsFor(insert, null, ROW_TRACEPARENT);
}

const keyOf = (merchantId: string, type: string, orderId: string) => `${merchantId} ${type} ${orderId}`;

/**
 * PostgreSQL refused a value (SQLSTATE class 22, data exception) or a constraint (class 23): one
 * row's fault, worth finding by writing the rows alone. Anything else (the database is away, a
 * timeout) would fail every row alike, so the batch fails at once.
 */
const refusedRow = (error: Error) => /^2[23]/.test(String((error as { code?: unknown }).code ?? ''));

/**
 * Writes a batch; per item, the created transaction, null when its orderId was already taken (by an
 * earlier create, or by an earlier item of this batch: the first one wins), or the error that item
 * alone causes. When PostgreSQL refuses the batch for one row's sake, each item is written alone, so
 * one bad row costs only its own request.
 */
async function insertBatch(pool: pg.Pool, items: NewTransaction[]): Promise<(Transaction | null | Error)[]> {
  let rows: { tx: Transaction; merchant_id: string }[];
  try {
    rows = await writeWithEvents(pool, insertStatement(items), 'create_transactions');
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    if (items.length === 1 || !refusedRow(error)) return items.map(() => error);
    return (await Promise.all(items.map((t) => insertBatch(pool, [t])))).flat();
  }
  const created = new Map(rows.map((r) => [keyOf(r.merchant_id, r.tx.type, r.tx.orderId), r.tx]));
  return items.map((t) => {
    const key = keyOf(t.merchantId, t.type, t.orderId);
    const tx = created.get(key) ?? null;
    created.delete(key); // a later item with the same key found it taken
    return tx;
  });
}

/**
 * A withdraw is judged again at most this many times when its batch left it out although it fits
 * (earlier withdraws of its batch held funds that were not spent after all, or its balance had no
 * row yet); each round takes the balance's lock anew, so a round only ends in a refusal when the
 * funds are not there.
 */
const MAX_WITHDRAW_ROUNDS = 10;

export async function createTransaction(db: pg.Pool, t: NewTransaction): Promise<CreateOutcome> {
  try {
    return await createOrRefuse(db, t);
  } catch (error) {
    if (isCurrencyCap(error)) return { kind: 'currency_limit' };
    throw error;
  }
}

async function createOrRefuse(db: pg.Pool, t: NewTransaction): Promise<CreateOutcome> {
  for (let round = 1; ; round++) {
    const created = await withSpan('insert transaction', {}, () => creatorFor(db)(t));
    if (created) return { kind: 'created', transaction: created };

    const existing = await storedWithOrderId(db, t);
    if (existing) return { kind: existing.same ? 'replayed' : 'conflict', transaction: existing.tx };
    if (t.type !== 'withdraw') throw new Error('orderId conflict reported but no row found');

    const funds = await fundsFor(db, t);
    if (!funds.fits) {
      // One more currency is refused as such (400 naming it), as a deposit in it is, not as a lack
      // of funds that could never arrive: no deposit in it would be taken.
      if (!funds.has_row && !(await currencyWouldBeTaken(db, t))) return { kind: 'currency_limit' };
      withdrawsRefused.inc({ reason: 'insufficient_funds' });
      return { kind: 'insufficient_funds', asked: funds.asked, withdrawable: funds.withdrawable };
    }
    if (round >= MAX_WITHDRAW_ROUNDS) throw new Error(`withdraw left out of ${round} batches although it fits`);
    if (!funds.has_row) await ensureBalanceRow(db, t.merchantId, t.currency);
  }
}

/**
 * The transaction that holds this orderId (perhaps a concurrent identical request's that just
 * committed), and whether every field is the same by value (a replay) or not (a conflict).
 */
async function storedWithOrderId(db: pg.Pool, t: NewTransaction): Promise<{ tx: Transaction; same: boolean } | undefined> {
  const metadata = JSON.stringify(t.metadata);
  const stored = sql`
    SELECT ${transactionJson('t')} AS tx,
           (t.amount = ${t.amount}::numeric AND t.currency = ${t.currency}
            AND t.description IS NOT DISTINCT FROM ${t.description}::text
            AND t.metadata = ${metadata}::jsonb
            AND t.destination IS NOT DISTINCT FROM ${t.destination}::text) AS same
    FROM transactions t
    WHERE t.merchant_id = ${t.merchantId}::uuid AND t.type = ${t.type}::transaction_type AND t.order_id = ${t.orderId}`;
  const [row] = await query<{ tx: Transaction; same: boolean }>(db, stored);
  return row;
}

/**
 * What a withdraw left out of its batch may take (without a balance row: the merchant's default
 * credit limit), and whether its currency has a balance row yet.
 */
async function fundsFor(db: pg.Pool, t: NewTransaction): Promise<{ fits: boolean; asked: string; withdrawable: string; has_row: boolean }> {
  const [row] = await query<{ fits: boolean; asked: string; withdrawable: string; has_row: boolean }>(db, sql`
    SELECT ${t.amount}::numeric <= s.spendable AS fits, ${t.amount}::numeric::text AS asked,
           greatest(s.spendable, 0)::text AS withdrawable, s.has_row
    FROM (SELECT coalesce(b.available + ${CREDIT_LIMIT_IN_FORCE}, m.credit_limit) AS spendable, b.merchant_id IS NOT NULL AS has_row
            FROM merchants m LEFT JOIN balances b ON b.merchant_id = m.id AND b.currency = ${t.currency}
           WHERE m.id = ${t.merchantId}::uuid) s`);
  if (!row) throw new Error(`merchant ${t.merchantId} not found`);
  return row;
}

/**
 * Whether the merchant may use one more currency, asked of the rule itself (the cap's trigger,
 * currency-cap.ts) rather than counted again here: the balance row is inserted and the transaction
 * rolled back whatever the answer, so a refused withdraw writes nothing. Only a withdraw about to be
 * refused in a currency the merchant has no row in comes here.
 */
async function currencyWouldBeTaken(db: pg.Pool, t: NewTransaction): Promise<boolean> {
  try {
    await rolledBack(db, (client) => ensureBalanceRow(client, t.merchantId, t.currency));
    return true;
  } catch (error) {
    if (isCurrencyCap(error)) return false;
    throw error;
  }
}

export type ChangeOutcome =
  | { kind: 'changed'; transaction: Transaction }
  | { kind: 'not_found' }
  | { kind: 'refused'; current: TransactionStatusName };

/** Moves one transaction (operator API); merchantId scopes it when given. */
export async function changeStatus(
  db: pg.Pool,
  id: string,
  to: keyof typeof ALLOWED_FROM,
  reason: string | null,
  traceparent: string | null,
): Promise<ChangeOutcome> {
  const from = ALLOWED_FROM[to];
  const update = sql`
    UPDATE transactions SET status = ${to}::transaction_status, last_sequence = last_sequence + 1, updated_at = now()
    WHERE id = ${id}::uuid AND status = ANY(${from}::transaction_status[])
    RETURNING *`;
  const [row] = await writeWithEvents(db, withEventsFor(update, reason, traceparent));
  if (row) return { kind: 'changed', transaction: row.tx };
  const [current] = await query<{ status: TransactionStatusName }>(db, sql`SELECT status::text AS status FROM transactions WHERE id = ${id}::uuid`);
  return current ? { kind: 'refused', current: current.status } : { kind: 'not_found' };
}

/**
 * Sandbox: settles pending transactions older than settleMs — failed when the amount's fraction is
 * exactly .66, else completed. SKIP LOCKED lets several replicas settle side by side.
 */
export async function settleDue(db: pg.Pool, settleMs: number, batch = 100): Promise<number> {
  const update = sql`
    UPDATE transactions t
    SET status = (CASE WHEN t.amount - trunc(t.amount) = 0.66 THEN 'failed' ELSE 'completed' END)::transaction_status,
        last_sequence = t.last_sequence + 1, updated_at = now()
    FROM (SELECT id FROM transactions
          WHERE status = 'pending' AND created_at <= now() - make_interval(secs => ${settleMs / 1000}::float8)
          ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) due
    WHERE t.id = due.id
    RETURNING t.*`;
  // Each settled event continues the trace of the request that created its transaction (stored on
  // the row), so an SRE sees create, settlement and both callbacks in one trace in Jaeger.
  const rows = await writeWithEvents(db, withEventsFor(update, 'sandbox settlement', ROW_TRACEPARENT));
  return rows.length;
}
