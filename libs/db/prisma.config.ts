// Prisma CLI configuration. Only `prisma generate` is used through the CLI: migrations are applied by
// src/migrations/deploy-migrations.ts and written by src/authoring (Prisma's WASM schema engine).
import path from 'node:path';
import { defineConfig } from 'prisma/config';

// The CLI insists that a schema engine binary exists even for `generate`, which never runs it, and
// the native binary cannot be downloaded here: point it at a stub that explains what to use instead.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(__dirname, 'tools', 'no-schema-engine.js');
// Prisma's version check phones home; nothing outside the npm registry is reachable here.
process.env.CHECKPOINT_DISABLE ??= '1';

export default defineConfig({
  schema: path.join(__dirname, 'prisma', 'schema.prisma'),
  migrations: { path: path.join(__dirname, 'prisma', 'migrations') },
  // Read directly rather than with env(), which makes `generate` fail when the variable is unset.
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/deposit_withdraw' },
});
