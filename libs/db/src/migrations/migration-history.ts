// Prisma's record of applied migrations, the `_prisma_migrations` table, written exactly as
// `prisma migrate deploy` writes it, so either tool sees what the other applied.
import type pg from 'pg';

// Prisma's own DDL for the table (the schema engine's PostgreSQL connector).
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrationRecord {
  name: string;
  startedAt: Date;
  finishedAt: Date | null;
  rolledBackAt: Date | null;
  logs: string | null;
}

export async function ensureHistoryTable(client: pg.ClientBase): Promise<void> {
  await client.query(CREATE_TABLE);
}

export async function readHistory(client: pg.ClientBase): Promise<MigrationRecord[]> {
  const { rows } = await client.query<MigrationRecord>(
    `SELECT migration_name AS "name", started_at AS "startedAt", finished_at AS "finishedAt",
            rolled_back_at AS "rolledBackAt", logs
       FROM "_prisma_migrations" ORDER BY started_at`,
  );
  return rows;
}

/** Records a migration applied in the caller's transaction: one step, finished now. */
export async function recordApplied(client: pg.ClientBase, id: string, name: string, checksum: string): Promise<void> {
  await client.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
     VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
    [id, checksum, name],
  );
}
