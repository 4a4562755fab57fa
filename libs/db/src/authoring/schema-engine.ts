// Authoring migrations without Prisma's native schema engine (it cannot be downloaded here):
// `prisma migrate dev --name`, driven through Prisma's official WASM engine and @prisma/adapter-pg,
// writes the same migration files as the native CLI. A developer tool only: deploys, the image and
// the test databases apply migrations with src/migrations/deploy-migrations.ts.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';
import { ensureDatabase } from '../ensure-database';
import { deployMigrations } from '../migrations/deploy-migrations';
import { findPrismaDir } from '../migrations/migrations-dir';
import { migrationAdapterFactory } from './migration-adapter';
import { readMigrationsList, writeMigration } from './migrations-list';
import { type SchemaEngine, schemaEngineClass } from './wasm-schema-engine';

export type MigrationPaths = {
  /** Folder holding schema.prisma and migrations/; default: libs/db/prisma. */
  prismaDir?: string;
};

const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

function resolvePaths(options: MigrationPaths) {
  const prismaDir = options.prismaDir ?? findPrismaDir();
  return { schemaPath: path.join(prismaDir, 'schema.prisma'), migrationsDir: path.join(prismaDir, 'migrations') };
}

/** Runs `work` with a fresh engine on `url`, then frees it and closes every connection it opened. */
async function withEngine<T>(url: string, schemaPath: string, work: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const schema = await readFile(schemaPath, 'utf8');
  const factory = migrationAdapterFactory(url);
  const log = (line: string) => {
    if (process.env.DEBUG_SCHEMA_ENGINE) process.stderr.write(`schema-engine: ${line}\n`);
  };
  const engine = await schemaEngineClass().new(
    { datamodels: [[schemaPath, schema]] },
    log,
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  try {
    return await work(engine);
  } finally {
    engine.free();
    await factory.closeAll();
  }
}

/**
 * The engine's own `migrate deploy` (applyMigrations): how deploys ran before the runner of
 * src/migrations. Kept to prove that the two record migrations alike (test/deploy-migrations.test.ts).
 */
export async function deployWithEngine(url: string, options: MigrationPaths = {}): Promise<string[]> {
  const { schemaPath, migrationsDir } = resolvePaths(options);
  const migrationsList = await readMigrationsList(migrationsDir);
  return withEngine(url, schemaPath, async (engine) => {
    const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters: NO_FILTER });
    return appliedMigrationNames;
  });
}

async function refuseReset(engine: SchemaEngine, migrationsList: MigrationList): Promise<void> {
  const { action } = await engine.devDiagnostic({ migrationsList, filters: NO_FILTER });
  if (action.tag === 'reset') {
    throw new Error(`the database needs a reset before a new migration can be created: ${action.reason}`);
  }
}

export type CreateMigrationResult = {
  /** Pending migrations applied to the development database before diffing. */
  applied: string[];
  /** Folder name of the new migration, or null when schema.prisma matches the migrations. */
  created: string | null;
  /** Data-loss warnings the engine raised for the new migration. */
  warnings: string[];
};

/**
 * `prisma migrate dev --name <name>` for developers: brings `url`'s database up to date, diffs
 * schema.prisma against the migrations (replayed in a throwaway shadow database), writes
 * prisma/migrations/<timestamp>_<name>/migration.sql when they differ, and applies it.
 * Refuses, instead of resetting, when the database has drifted from the migration history.
 */
export async function createMigration(url: string, name: string, options: MigrationPaths = {}): Promise<CreateMigrationResult> {
  const { schemaPath, migrationsDir } = resolvePaths(options);
  await ensureDatabase(url);
  const migrationsList = await readMigrationsList(migrationsDir);
  // The engine attaches its shadow database during devDiagnostic and loses it once it has applied
  // something, so the runner catches the database up between two engines' diagnostics.
  await withEngine(url, schemaPath, (engine) => refuseReset(engine, migrationsList));
  const applied = await deployMigrations(url, { migrationsDir });
  const schema = { files: [{ path: schemaPath, content: await readFile(schemaPath, 'utf8') }] };
  const { created, warnings } = await withEngine(url, schemaPath, async (engine) => {
    await refuseReset(engine, migrationsList);
    const loss = await engine.evaluateDataLoss({ migrationsList, schema, filters: NO_FILTER });
    const output = await engine.createMigration({ draft: false, migrationName: name, migrationsList, schema, filters: NO_FILTER });
    if (output.migrationScript === null) return { created: null, warnings: [] };
    await writeMigration(migrationsDir, output.generatedMigrationName, output.migrationScript, output.connectorType);
    return { created: output.generatedMigrationName, warnings: loss.warnings.map((w) => w.message) };
  });
  if (created) await deployMigrations(url, { migrationsDir });
  return { applied, created, warnings };
}
