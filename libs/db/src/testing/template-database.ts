/**
 * A fresh, fully migrated database per test file, in a fraction of a second: the migrations are
 * applied once to a template database named after their checksum, and each test database is a
 * `CREATE DATABASE … TEMPLATE` copy of it. The server is the one in DATABASE_URL (default
 * postgresql://postgres@127.0.0.1:5432); only its host, port and credentials are used.
 *
 *   const db = await createTestDatabase('create-deposit');   // in beforeAll
 *   … createPool(db.url) … createPrisma(db.url) …
 *   await db.drop();                                         // in afterAll, after closing pools
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_DATABASE_URL } from '@dw/config';
import { dropTestDatabase } from '@dw/testing';
import type pg from 'pg';
import { quoteIdent, withDatabase } from '../database-url';
import { connectClient } from '../ensure-database';
import { migrationsDir } from '../migrations/migrations-dir';
import { deployMigrations } from '../migrations/deploy-migrations';

export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  /** Drops the database, closing any connection still open on it. */
  drop(): Promise<void>;
}

const serverUrl = () => withDatabase(process.env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL, 'postgres');

let template: Promise<string> | undefined;

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const server = serverUrl();
  template ??= migrationsChecksum().then((hash) => ensureTemplate(server, `dw_tmpl_${hash}`));
  const source = await template.catch((error: unknown) => {
    template = undefined; // let the next test file try again
    throw error;
  });
  const safeLabel = label.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 30);
  const name = `dw_test_${safeLabel}_${randomBytes(4).toString('hex')}`;
  await withAdmin(server, (admin) => cloneTemplate(admin, source, name));
  return {
    url: withDatabase(server, name),
    drop: () => withAdmin(server, (admin) => dropTestDatabase(admin, name)),
  };
}

/** SHA-256 over every migration's folder name and script: a new or edited migration, a new template. */
async function migrationsChecksum(): Promise<string> {
  const hash = createHash('sha256');
  const dir = migrationsDir();
  const folders = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const folder of folders.sort()) {
    hash.update(folder).update('\0').update(await readFile(path.join(dir, folder, 'migration.sql'))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the template unless a finished one exists. "Finished" is marked by ALLOW_CONNECTIONS
 * false, set only after the migrations succeeded, so a build interrupted half-way is redone.
 */
async function ensureTemplate(server: string, name: string): Promise<string> {
  await withAdmin(server, async (admin) => {
    const finished = async () =>
      (await admin.query<{ datallowconn: boolean }>('SELECT datallowconn FROM pg_database WHERE datname = $1', [name])).rows[0]?.datallowconn === false;
    if (await finished()) return; // the usual case: no lock, so test files never queue behind a build
    // Serialises the builds of this template across processes (advisory locks are server-wide);
    // other templates (other worktrees' migrations) build meanwhile.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      if (await finished()) return;
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
      await deployMigrations(withDatabase(server, name));
      await admin.query(`ALTER DATABASE ${quoteIdent(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

// CREATE DATABASE … TEMPLATE refuses while a session is still connected to the template (55006);
// right after a build, the migration's closed connection may take a moment to go away.
async function cloneTemplate(admin: pg.Client, source: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(source)}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function withAdmin<T>(server: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = await connectClient(server);
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}
