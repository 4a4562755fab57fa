#!/usr/bin/env node
// Stand-in for Prisma's native schema engine, which cannot be downloaded on these machines.
// `prisma generate` only checks that PRISMA_SCHEMA_ENGINE_BINARY names an existing file and never
// runs it; any other Prisma CLI command that reaches here would need the real engine.
console.error(
  'The native Prisma schema engine is not installed. Use `npm run db:migrate` (deploy) or ' +
    '`npm run db:migration:create -w @dw/db -- --name <x>` instead of `prisma migrate` / `prisma db`.',
);
process.exit(1);
