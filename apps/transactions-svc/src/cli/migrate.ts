// `db:migrate`: creates the database named in DATABASE_URL when missing and applies
// prisma/migrations (`deploy`, the default), or, for developers, writes a new migration from
// schema.prisma changes (`dev --name <name>`). Replaces `prisma migrate`, whose native engine
// cannot be installed here; the files and the _prisma_migrations table are the same.
import { parseArgs } from 'node:util';
import { databaseName, ensureDatabase, serverAddress } from '@dw/db';
import { createMigration, deployMigrations } from '@dw/db/migrations';
import { UsageError, databaseUrlFrom, reportFailure } from './cli-support';

const HELP = `Usage: migrate [deploy]            create the database if missing, apply pending migrations
       migrate dev --name <name>   apply pending migrations, then write
                                   prisma/migrations/<timestamp>_<name>/ for schema.prisma changes
Reads DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/deposit_withdraw).
Exit codes: 0 done, 1 failed (e.g. PostgreSQL unreachable), 2 bad usage.
`;

async function deploy(url: string): Promise<void> {
  const started = Date.now();
  const created = await ensureDatabase(url);
  const applied = await deployMigrations(url);
  const where = `database ${databaseName(url)} at ${serverAddress(url)}`;
  const what = applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'no pending migrations';
  process.stdout.write(`${created ? 'Created' : 'Checked'} ${where}; ${what} (${Date.now() - started} ms)\n`);
}

async function dev(url: string, name: string | undefined): Promise<void> {
  if (!name || !/^[A-Za-z0-9_]+$/.test(name)) throw new UsageError('dev needs --name <name> (letters, digits, _)');
  const { applied, created, warnings } = await createMigration(url, name);
  if (applied.length) process.stdout.write(`Applied pending migration(s): ${applied.join(', ')}\n`);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  process.stdout.write(
    created
      ? `Created and applied prisma/migrations/${created}/migration.sql\n`
      : 'schema.prisma matches the migrations: no new migration needed\n',
  );
}

export async function runMigrateCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const url = databaseUrlFrom(env);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const [command = 'deploy', ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
    if (command === 'deploy') await deploy(url);
    else if (command === 'dev') await dev(url, values.name);
    else throw new UsageError(`unknown command ${command}`);
    return 0;
  } catch (error) {
    const failure = error instanceof TypeError && 'code' in error ? new UsageError(error.message) : error; // parseArgs
    return reportFailure('migrate', failure, url);
  }
}

if (require.main === module) {
  void runMigrateCli(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
