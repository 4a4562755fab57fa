/**
 * `prisma migrate deploy` without Prisma's schema engine: applies, in name order, each
 * prisma/migrations/<name>/migration.sql that `_prisma_migrations` does not list as applied, and
 * records it there as Prisma does (docs/decisions.md, "Migrations without the schema engine").
 *
 * - Concurrent deploys serialise on Prisma's own advisory lock (72707369), so this runner, an old
 *   deploy through the WASM engine and a native `prisma migrate deploy` never interleave.
 * - Each migration runs in one transaction with its history row: it is applied and recorded, or
 *   neither. A failure stops the deploy with MigrationFailedError; nothing of that migration stays.
 * - A migration Prisma recorded as failed (started, never finished, not rolled back) stops every
 *   deploy, as it stops Prisma's, until someone repairs the database and marks it rolled back.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { connectClient } from '../ensure-database';
import { ensureHistoryTable, readHistory, recordApplied, type MigrationRecord } from './migration-history';
import { readMigrationFiles, type MigrationFile } from './migration-files';
import { migrationsDir } from './migrations-dir';

const PRISMA_MIGRATE_LOCK = 72_707_369;

/** A migration's script failed; the message names it and PostgreSQL's error. */
export class MigrationFailedError extends Error {
  constructor(
    readonly migration: string,
    script: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed and was rolled back: ${describePgError(cause, script)}`, { cause });
    this.name = 'MigrationFailedError';
  }
}

/** The history holds a migration that failed earlier; deploys stop until it is resolved. */
export class FailedMigrationInHistoryError extends Error {
  constructor(readonly failed: MigrationRecord[]) {
    const names = failed.map((record) => record.name).join(', ');
    super(
      `_prisma_migrations records ${names} as started and never finished: repair the database, then mark ` +
        `it rolled back (UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '…') ` +
        'and deploy again',
    );
    this.name = 'FailedMigrationInHistoryError';
  }
}

export interface DeployOptions {
  /** Folder of the migrations; default libs/db/prisma/migrations. */
  migrationsDir?: string;
}

/**
 * Applies the pending migrations to `url`'s database (which must exist: see ensureDatabase).
 * Returns their names, empty when the database was up to date.
 */
export async function deployMigrations(url: string, options: DeployOptions = {}): Promise<string[]> {
  const files = await readMigrationFiles(options.migrationsDir ?? migrationsDir());
  const client = await connectClient(url);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    await ensureHistoryTable(client);
    const history = await readHistory(client);
    const failed = history.filter((record) => record.finishedAt === null && record.rolledBackAt === null);
    if (failed.length > 0) throw new FailedMigrationInHistoryError(failed);
    const applied = new Set(history.filter((record) => record.rolledBackAt === null).map((record) => record.name));
    const pending = files.filter((file) => !applied.has(file.name));
    for (const file of pending) await applyOne(client, file);
    return pending.map((file) => file.name);
  } finally {
    await client.end(); // ends the session, and with it the advisory lock
  }
}

async function applyOne(client: pg.Client, file: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    // One simple-protocol query (no parameters): the whole script, dollar-quoted bodies included.
    await client.query(file.script);
    await recordApplied(client, randomUUID(), file.name, file.checksum);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new MigrationFailedError(file.name, file.script, error);
  }
}

/** PostgreSQL's message, its SQLSTATE and the line of migration.sql it points at, if any. */
function describePgError(error: unknown, script: string): string {
  if (!(error instanceof Error)) return String(error);
  const { code, position } = error as { code?: string; position?: string };
  const line = position ? script.slice(0, Number(position) - 1).split('\n').length : undefined;
  return [error.message, code && `SQLSTATE ${code}`, line && `line ${line} of migration.sql`].filter(Boolean).join(', ');
}
