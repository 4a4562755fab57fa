/**
 * A fresh database per test file, migrated with transactions-svc's migration scripts (the schema's
 * owner). Files are read, not imported: apps never import each other.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { dropTestDatabase } from '@dw/testing';
import { Client } from 'pg';

const SERVER = 'postgresql://postgres@127.0.0.1:5432';
const MIGRATIONS_DIR = path.join(__dirname, '..', '..', '..', 'transactions-svc', 'prisma', 'migrations');

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `dw_cb_${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await withClient(`${SERVER}/postgres`, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = `${SERVER}/${name}`;
  const folders = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  await withClient(url, async (client) => {
    for (const folder of folders.sort()) await client.query(await readFile(path.join(MIGRATIONS_DIR, folder, 'migration.sql'), 'utf8'));
  });
  return {
    url,
    drop: () => withClient(`${SERVER}/postgres`, (admin) => dropTestDatabase(admin, name)),
  };
}
