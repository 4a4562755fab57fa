// The runner that deploys migrations (src/migrations/deploy-migrations.ts) against the real
// PostgreSQL: what it records must be what Prisma records, so that Prisma's engine and it each see
// the other's work as applied.
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabase, withDatabase } from '../src';
import { deployWithEngine } from '../src/authoring/schema-engine';
import { deployMigrations, FailedMigrationInHistoryError, MigrationFailedError, migrationsDir } from '../src/migrations';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const MIGRATIONS = migrationsDir();
const names = readdirSync(MIGRATIONS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const created: string[] = [];
const tmpDirs: string[] = [];

async function freshDatabase(): Promise<string> {
  const name = `dw_test_deploy_${randomBytes(4).toString('hex')}`;
  created.push(name);
  const url = withDatabase(SERVER, name);
  await ensureDatabase(url);
  return url;
}

async function rows<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

const HISTORY = `SELECT migration_name, checksum, logs, rolled_back_at, applied_steps_count, finished_at IS NOT NULL AS finished
                   FROM _prisma_migrations ORDER BY migration_name`;

/** A copy of the migrations with `extra` added as the last one. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-migrations-'));
  tmpDirs.push(dir);
  cpSync(MIGRATIONS, dir, { recursive: true });
  for (const [name, script] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), script);
  }
  return dir;
}

afterAll(async () => {
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
  for (const name of created) await rows(SERVER, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
});

describe('deployMigrations', () => {
  it('migrates a fresh database, recording each migration as Prisma does (file checksum, one step, finished)', async () => {
    const url = await freshDatabase();

    expect(await deployMigrations(url)).toEqual(names);

    const history = await rows<{ migration_name: string; checksum: string }>(url, HISTORY);
    expect(history).toEqual(
      names.map((name) => ({
        migration_name: name,
        checksum: createHash('sha256').update(readFileSync(path.join(MIGRATIONS, name, 'migration.sql'))).digest('hex'),
        logs: null,
        rolled_back_at: null,
        applied_steps_count: 1,
        finished: true,
      })),
    );
    expect(await deployMigrations(url)).toEqual([]);
  });

  it("recognises a database migrated by Prisma's engine as up to date, and the engine recognises the runner's", async () => {
    const byEngine = await freshDatabase();
    expect(await deployWithEngine(byEngine)).toEqual(names);
    const before = await rows(byEngine, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');

    expect(await deployMigrations(byEngine)).toEqual([]);
    expect(await rows(byEngine, 'SELECT * FROM _prisma_migrations ORDER BY migration_name')).toEqual(before);

    const byRunner = await freshDatabase();
    await deployMigrations(byRunner);
    expect(await deployWithEngine(byRunner)).toEqual([]);
    expect(await rows(byRunner, HISTORY)).toEqual(await rows(byEngine, HISTORY));
  });

  it('serialises concurrent deploys: each migration is applied and recorded once', async () => {
    const url = await freshDatabase();

    const results = await Promise.all([deployMigrations(url), deployMigrations(url), deployMigrations(url)]);

    expect(results.flat().sort()).toEqual(names);
    expect((await rows<{ migration_name: string }>(url, HISTORY)).map((row) => row.migration_name)).toEqual(names);
  });

  it('stops at a failing migration with its name, the error and the line, leaving nothing of it behind', async () => {
    const url = await freshDatabase();
    const broken = '29990101000000_broken';
    const dir = migrationsWith({ [broken]: 'CREATE TABLE half_done (id int);\n\nSELECT no_such_column FROM half_done;\n' });

    const failure = deployMigrations(url, { migrationsDir: dir });

    await expect(failure).rejects.toBeInstanceOf(MigrationFailedError);
    await expect(failure).rejects.toThrow(
      `migration ${broken} failed and was rolled back: column "no_such_column" does not exist, SQLSTATE 42703, line 3 of migration.sql`,
    );
    expect((await rows<{ migration_name: string }>(url, HISTORY)).map((row) => row.migration_name)).toEqual(names);
    expect(await rows(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'")).toEqual([]);

    writeFileSync(path.join(dir, broken, 'migration.sql'), 'CREATE TABLE half_done (id int);\n');
    expect(await deployMigrations(url, { migrationsDir: dir })).toEqual([broken]);
  });

  it('refuses to deploy past a migration Prisma recorded as failed until it is marked rolled back', async () => {
    const url = await freshDatabase();
    const last = '29990101000000_repairable';
    const dir = migrationsWith({ [last]: 'CREATE TABLE repair_me (id int);\n' });
    await deployMigrations(url, { migrationsDir: dir });
    await rows(url, `UPDATE _prisma_migrations SET finished_at = NULL, logs = 'boom' WHERE migration_name = '${last}'`);

    await expect(deployMigrations(url, { migrationsDir: dir })).rejects.toBeInstanceOf(FailedMigrationInHistoryError);
    await expect(deployMigrations(url, { migrationsDir: dir })).rejects.toThrow(`_prisma_migrations records ${last} as started and never finished`);

    await rows(url, `UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = '${last}'`);
    await rows(url, 'DROP TABLE repair_me'); // the repair: what the rolled-back migration creates
    expect(await deployMigrations(url, { migrationsDir: dir })).toEqual([last]);
  });
});
