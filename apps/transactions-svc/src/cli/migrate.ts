// `db:migrate`: creates the database named in DATABASE_URL when missing and applies
// libs/db/prisma/migrations (`deploy`, the default), recorded in _prisma_migrations as
// `prisma migrate deploy` records them. New migrations are written with
// `npm run db:migration:create -w @dw/db -- --name <name>`.
import { parseArgs } from 'node:util';
import { databaseName, ensureDatabase, serverAddress } from '@dw/db';
import { deployMigrations } from '@dw/db/migrations';
import { UsageError, databaseUrlFrom, reportFailure, usageFromParseArgs } from './cli-support';

const HELP = `Usage: migrate [deploy]   create the database if missing, apply pending migrations
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

export async function runMigrateCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const url = databaseUrlFrom(env);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const [command = 'deploy', ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
    if (command !== 'deploy') throw new UsageError(`unknown command ${command}`);
    await deploy(url);
    return 0;
  } catch (error) {
    return reportFailure('migrate', usageFromParseArgs(error), url);
  }
}

if (require.main === module) {
  void runMigrateCli(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
