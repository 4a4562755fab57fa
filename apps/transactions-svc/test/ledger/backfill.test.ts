/**
 * The migration that adds the ledger enters every transaction that existed before it once, as if
 * the ledger had been there: applied here, as SQL, to a database holding a history written by the
 * migrations before it; and ledger_backfill, the function a later migration made of that backfill.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createPool, withDatabase } from '@dw/db';
import { verifyLedger } from '../../src/domain/ledger-verify';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const MIGRATIONS_DIR = path.join(__dirname, '..', '..', '..', '..', 'libs', 'db', 'prisma', 'migrations');
const migrations = readdirSync(MIGRATIONS_DIR, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
const LEDGER = migrations.find((name) => name.endsWith('_ledger'))!;
const sqlOf = (name: string) => readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');

const name = `dw_test_backfill_${randomBytes(4).toString('hex')}`;
const url = withDatabase(SERVER, name);
let client: pg.Client;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const m of migrations.slice(0, migrations.indexOf(LEDGER))) await client.query(sqlOf(m));
});

afterAll(async () => {
  await client?.end();
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

async function merchant(): Promise<string> {
  const id = randomUUID();
  await client.query(`INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret) VALUES ($1, 'm', $2, 'whsec_x')`, [id, randomBytes(32).toString('hex')]);
  return id;
}

let minute = 0;
async function tx(merchantId: string, type: string, status: string, amount: string, currency = 'USD'): Promise<void> {
  minute++;
  await client.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
     VALUES ($1::uuid, $2, $3, $4, $5, $6, $1::text, 1, now() - make_interval(mins => 1000 - $7::int), now() - make_interval(mins => 500 - $7::int))`,
    [randomUUID(), merchantId, type, status, amount, currency, minute],
  );
}

it('enters each transaction once, as if the ledger had been there, and ledger:verify finds nothing', async () => {
  const a = await merchant();
  const b = await merchant();
  await tx(a, 'deposit', 'completed', '100.00');
  await tx(a, 'deposit', 'pending', '50');
  await tx(a, 'deposit', 'failed', '30');
  await tx(a, 'deposit', 'processing', '0.5');
  await tx(a, 'withdraw', 'completed', '20');
  await tx(a, 'withdraw', 'failed', '10');
  await tx(a, 'withdraw', 'pending', '5');
  await tx(a, 'withdraw', 'processing', '7');
  await tx(a, 'deposit', 'completed', '1', 'EUR');
  await tx(b, 'withdraw', 'completed', '999999999'); // accepted before anything counted money

  await client.query(sqlOf(LEDGER));

  const { rows: balances } = await client.query(
    `SELECT merchant_id, currency, available::text, held::text, incoming::text, entry_count::int FROM balances ORDER BY merchant_id = $1 DESC, currency`,
    [a],
  );
  expect(balances).toEqual([
    { merchant_id: a, currency: 'EUR', available: '1', held: '0', incoming: '0', entry_count: 2 },
    { merchant_id: a, currency: 'USD', available: '68.00', held: '12', incoming: '50.50', entry_count: 12 },
    { merchant_id: b, currency: 'USD', available: '-999999999', held: '0', incoming: '0', entry_count: 2 },
  ]);
  const { rows: kinds } = await client.query(`SELECT kind::text, count(*)::int AS n FROM ledger_entries GROUP BY 1 ORDER BY 1`);
  expect(kinds).toEqual([
    { kind: 'deposit.completed', n: 2 },
    { kind: 'deposit.failed', n: 1 },
    { kind: 'deposit.pending', n: 5 },
    { kind: 'withdraw.completed', n: 2 },
    { kind: 'withdraw.hold', n: 5 },
    { kind: 'withdraw.release', n: 1 },
  ]);
  const pool = createPool(url, 1);
  try {
    const report = await verifyLedger(pool);
    expect(report).toMatchObject({ ok: true, balances: 3, entries: 16, transactions: 10, overdrawn: 1 });
  } finally {
    await pool.end();
  }
});

it('ledger_backfill (a later migration) enters a copy of that history as the migration did, then continues its chain', async () => {
  for (const m of migrations.slice(migrations.indexOf(LEDGER) + 1)) await client.query(sqlOf(m));
  const { rows: [{ id: a }] } = await client.query(`SELECT merchant_id AS id FROM ledger_entries GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`);
  const copy = await merchant();
  await client.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
     SELECT gen_random_uuid(), $2, type, status, amount, currency, order_id, 1, created_at, updated_at FROM transactions WHERE merchant_id = $1`,
    [a, copy],
  );
  const chain = (merchantId: string) =>
    client.query(
      `SELECT currency, balance_seq::int, kind::text, debit_account::text, credit_account::text, amount::text,
              available::text, held::text, incoming::text, created_at
         FROM ledger_entries WHERE merchant_id = $1 ORDER BY currency, balance_seq`,
      [merchantId],
    );

  const { rows: [first] } = await client.query(`SELECT ledger_backfill($1, 'copied history') AS entries`, [copy]);

  expect(first.entries).toBe(14);
  expect((await chain(copy)).rows).toEqual((await chain(a)).rows);
  await tx(copy, 'deposit', 'completed', '2.50'); // older than its chain's last entry: entered after it
  const { rows: [second] } = await client.query(`SELECT ledger_backfill($1, 'one more') AS entries`, [copy]);
  expect(second.entries).toBe(2);
  const { rows: [usd] } = await client.query(
    `SELECT available::text, entry_count::int FROM balances WHERE merchant_id = $1 AND currency = 'USD'`,
    [copy],
  );
  expect(usd).toEqual({ available: '70.50', entry_count: 14 });
  const pool = createPool(url, 1);
  try {
    expect(await verifyLedger(pool)).toMatchObject({ ok: true, balances: 5, entries: 32, transactions: 20 });
  } finally {
    await pool.end();
  }
});
