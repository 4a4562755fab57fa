import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from '@dw/db';
import { migrationsDir } from '@dw/db/migrations';
import { removeCliBuild, runCli } from '../cli/run-cli';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const MIGRATIONS_DIR = migrationsDir();
const migrationNames = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('migrate deploy', () => {
  const created: string[] = [];
  const freshDatabase = () => {
    const name = `dw_test_migrate_${randomBytes(4).toString('hex')}`;
    created.push(name);
    return withDatabase(SERVER, name);
  };

  afterAll(async () => {
    removeCliBuild();
    for (const name of created) await query(SERVER, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  it('creates the missing database and applies every migration, recorded with the native checksums', async () => {
    const url = freshDatabase();
    const result = await runCli('migrate', ['deploy'], { DATABASE_URL: url });

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Created database dw_test_migrate_\w+ at 127\.0\.0\.1:5432; applied/);
    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      url,
      'SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((row) => row.migration_name)).toEqual(migrationNames);
    for (const row of rows) {
      const script = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(script).digest('hex'));
      expect(row.finished_at).not.toBeNull();
    }
    const tables = await query<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.map((t) => t.tablename).sort()).toEqual(
      [
        '_prisma_migrations', 'balances', 'callback_attempts', 'callback_deliveries', 'ledger_entries', 'manual_outbox', 'merchants', 'outbox',
        'transaction_events', 'transactions', 'unsuccessful_deliveries',
      ].sort(),
    );
  });

  it('is a no-op on an up-to-date database', async () => {
    const url = freshDatabase();
    expect((await runCli('migrate', [], { DATABASE_URL: url })).code).toBe(0);
    const before = await query(url, 'SELECT * FROM _prisma_migrations ORDER BY id');

    const again = await runCli('migrate', ['deploy'], { DATABASE_URL: url });

    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(/^Checked database .*; no pending migrations/);
    expect(await query(url, 'SELECT * FROM _prisma_migrations ORDER BY id')).toEqual(before);
  });

  it('lets two deploys race on a missing database: both succeed, each migration applied once', async () => {
    const url = freshDatabase();
    const results = await Promise.all([runCli('migrate', [], { DATABASE_URL: url }), runCli('migrate', [], { DATABASE_URL: url })]);

    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const rows = await query<{ migration_name: string }>(url, 'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name');
    expect(rows.map((row) => row.migration_name)).toEqual(migrationNames);
  });

  it('names PostgreSQL and its address in one line, without the password, and exits 1 when it is unreachable', async () => {
    const result = await runCli('migrate', ['deploy'], { DATABASE_URL: 'postgresql://app:s3cret-pw@127.0.0.1:1/deposit_withdraw' });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/PostgreSQL.*127\.0\.0\.1:1/);
    expect(result.stderr).not.toContain('s3cret-pw');
  });

  it('refuses an unknown command with exit code 2', async () => {
    const result = await runCli('migrate', ['sideways'], { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/x' });

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('unknown command sideways');
  });
});
