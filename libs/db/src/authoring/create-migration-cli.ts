// `npm run db:migration:create -w @dw/db -- --name <name>`: applies pending migrations to the
// development database (DATABASE_URL), then writes prisma/migrations/<timestamp>_<name>/ for what
// schema.prisma adds, and applies it. A developer tool (Prisma's WASM engine); never shipped.
import { parseArgs } from 'node:util';
import { DEFAULT_DATABASE_URL } from '@dw/config';
import { createMigration } from './schema-engine';
import { lastEnginePanic } from './wasm-schema-engine';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { name: { type: 'string' } } });
  if (!values.name || !/^[A-Za-z0-9_]+$/.test(values.name)) {
    process.stderr.write('usage: db:migration:create -- --name <name> (letters, digits, _)\n');
    return 2;
  }
  const url = process.env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
  const { applied, created, warnings } = await createMigration(url, values.name);
  if (applied.length) process.stdout.write(`Applied pending migration(s): ${applied.join(', ')}\n`);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  process.stdout.write(
    created ? `Created and applied prisma/migrations/${created}/migration.sql\n` : 'schema.prisma matches the migrations: no new migration needed\n',
  );
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // A trap ("unreachable") says nothing; the engine's panic message says what went wrong. Its other
    // errors end in a Rust span trace ("   0: schema_engine_wasm::…"), cut here.
    const text = message === 'unreachable' ? `schema engine crashed: ${lastEnginePanic() ?? 'no panic message'}` : message.split(/\n\s+0: /)[0]!;
    process.stderr.write(`db:migration:create: ${text.trim()}\n`);
    process.exitCode = 1;
  },
);
