import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createMigration } from '../src/authoring/schema-engine';
import { createTestDatabase, type TestDatabase } from '../src/testing';

const PRISMA_DIR = path.join(__dirname, '..', 'prisma');

let db: TestDatabase;
let client: pg.Client;
let merchantId: string;

beforeAll(async () => {
  db = await createTestDatabase('schema');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  merchantId = randomUUID();
  await client.query("INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret) VALUES ($1, 'm', repeat('a', 64), 'whsec_x')", [merchantId]);
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

function insertAmount(amount: string) {
  return client.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
     VALUES ($1, $2, 'deposit', 'pending', $3, 'USD', $4, 1, now(), now()) RETURNING amount::text AS amount`,
    [randomUUID(), merchantId, amount, randomUUID()],
  );
}

describe('transactions.amount', () => {
  it.each(['0', '-1', '0.000000001', '1.123456789', '1000000000000000000', 'NaN', 'Infinity'])('refuses %s', async (amount) => {
    await expect(insertAmount(amount)).rejects.toMatchObject({ code: '23514' }); // check_violation
  });

  it.each([
    ['100.50', '100.50'],
    ['100.5', '100.5'],
    ['0.00000001', '0.00000001'],
    ['999999999999999999.99999999', '999999999999999999.99999999'],
  ])('keeps %s exactly as given', async (amount, stored) => {
    const { rows } = await insertAmount(amount);
    expect(rows[0].amount).toBe(stored);
  });
});

describe('outbox', () => {
  it('has no trigger: a NOTIFY at commit would serialise every create (the relay is woken in process)', async () => {
    const { rows } = await client.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND NOT tgisinternal`);
    expect(rows).toEqual([]);
  });
});

describe('migrate dev', () => {
  let prismaDir: string;
  beforeEach(() => {
    prismaDir = mkdtempSync(path.join(os.tmpdir(), 'dw-prisma-'));
    cpSync(PRISMA_DIR, prismaDir, { recursive: true });
  });
  afterEach(() => rmSync(prismaDir, { recursive: true, force: true }));

  it('finds no drift between schema.prisma and the migrations (hand-written CHECKs and trigger included)', async () => {
    const result = await createMigration(db.url, 'nothing', { prismaDir });

    expect(result).toEqual({ applied: [], created: null, warnings: [] });
    expect(readdirSync(path.join(prismaDir, 'migrations'))).toEqual(readdirSync(path.join(PRISMA_DIR, 'migrations')));
  });

  it('writes and applies a new migration for a schema change', async () => {
    const schemaPath = path.join(prismaDir, 'schema.prisma');
    const schema = readFileSync(schemaPath, 'utf8').replace('  name                  String        @db.VarChar(200)', '$&\n  country String?');
    writeFileSync(schemaPath, schema);

    const result = await createMigration(db.url, 'add_country', { prismaDir });

    expect(result.created).toMatch(/^\d{14}_add_country$/);
    const script = readFileSync(path.join(prismaDir, 'migrations', result.created!, 'migration.sql'), 'utf8');
    expect(script).toContain('ALTER TABLE "merchants" ADD COLUMN     "country" TEXT;');
    const { rows } = await client.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'merchants' AND column_name = 'country'");
    expect(rows).toHaveLength(1);
    expect(existsSync(path.join(prismaDir, 'migrations', 'migration_lock.toml'))).toBe(true);
  });
});
