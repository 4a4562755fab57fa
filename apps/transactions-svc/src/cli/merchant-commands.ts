// The merchant CLI's commands: parse, run against the database, print exactly one JSON line on
// stdout on success and nothing on stdout on failure.
import { parseArgs } from 'node:util';
import { connectClient } from '../db/ensure-database';
import { databaseName } from '../db/database-url';
import { createMerchant, type IssuedCredentials, rotateApiToken, rotateSigningSecret } from '../db/merchant-admin';
import { createPrisma, type PrismaClient } from '../db/prisma';
import { CliFailure, UsageError, databaseUrlFrom, reportFailure } from './cli-support';

export const MERCHANT_HELP = `Usage: merchant create --name <name>
       merchant rotate-token --merchant <merchantId>
       merchant rotate-secret --merchant <merchantId>

Each prints one line of JSON on stdout:
  {"merchantId":"<uuid>","apiToken":"dwk_…","callbackSigningSecret":"whsec_…"}
create        a new merchant with a new API token and callback signing secret.
rotate-token  a new API token (the old one stops working); callbackSigningSecret is the
              unchanged current secret.
rotate-secret a new callback signing secret. apiToken is left out: only the token's hash is
              stored, so the token in force cannot be shown again (it keeps working).
The token and secret are shown only here: store them now.
Reads DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/deposit_withdraw).
Exit codes: 0 done, 1 failed (unknown merchant, database unreachable), 2 bad usage.
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_NAME = 200; // merchants.name is VARCHAR(200)

export type MerchantCliHooks = {
  /** Called after a token rotation has committed, so caches of the old token can be dropped. */
  notifyTokenRotated(merchantId: string): Promise<void>;
};

type Command = { run(prisma: PrismaClient): Promise<IssuedCredentials | null>; merchantId?: string; rotatesToken: boolean };

function parseCommand(argv: string[]): Command | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { name: { type: 'string' }, merchant: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) return 'help';
  const [command, ...extra] = positionals;
  if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (command === 'create') {
    const name = values.name?.trim();
    if (!name) throw new UsageError('create needs --name <name>');
    if (name.length > MAX_NAME) throw new UsageError(`--name is longer than ${MAX_NAME} characters`);
    return { run: (prisma) => createMerchant(prisma, name), rotatesToken: false };
  }
  if (command === 'rotate-token' || command === 'rotate-secret') {
    const merchantId = values.merchant?.trim();
    if (!merchantId) throw new UsageError(`${command} needs --merchant <merchantId>`);
    if (!UUID.test(merchantId)) throw new UsageError(`--merchant must be a merchant id (a UUID), got ${JSON.stringify(merchantId)}`);
    const rotate = command === 'rotate-token' ? rotateApiToken : rotateSigningSecret;
    return { run: (prisma) => rotate(prisma, merchantId.toLowerCase()), merchantId, rotatesToken: command === 'rotate-token' };
  }
  throw new UsageError(command ? `unknown command ${command}` : 'missing command (create, rotate-token or rotate-secret)');
}

/** Fails with one clear line when PostgreSQL or the database is missing, before Prisma's errors. */
async function checkDatabase(url: string): Promise<void> {
  const client = await connectClient(url).catch((error: unknown) => {
    if ((error as { code?: unknown }).code === '3D000') {
      throw new CliFailure(`database ${databaseName(url)} does not exist: run npm run db:migrate first`);
    }
    throw error;
  });
  await client.end();
}

export async function runMerchantCli(argv: string[], env: NodeJS.ProcessEnv, hooks: MerchantCliHooks): Promise<number> {
  const url = databaseUrlFrom(env);
  let prisma: PrismaClient | undefined;
  try {
    const command = parseCommand(argv);
    if (command === 'help') {
      process.stdout.write(MERCHANT_HELP);
      return 0;
    }
    await checkDatabase(url);
    prisma = createPrisma(url, 1);
    const issued = await command.run(prisma);
    if (!issued) throw new CliFailure(`no merchant with id ${command.merchantId}`);
    if (command.rotatesToken) await notify(hooks, issued.merchantId);
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return 0;
  } catch (error) {
    const failure = error instanceof TypeError && 'code' in error ? new UsageError(error.message) : error; // parseArgs
    return reportFailure('merchant', failure, url);
  } finally {
    await prisma?.$disconnect();
  }
}

// The rotation has committed and the new token is valid: a failed broadcast must not lose it, so
// it is reported on stderr and the credentials are still printed.
async function notify(hooks: MerchantCliHooks, merchantId: string): Promise<void> {
  try {
    await hooks.notifyTokenRotated(merchantId);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`merchant: warning: the token was rotated but caches were not notified (${reason})\n`);
  }
}
