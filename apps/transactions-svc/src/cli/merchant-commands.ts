// The merchant CLI's commands: parse, run against the database, print exactly one JSON line on
// stdout on success and nothing on stdout on failure.
import { parseArgs } from 'node:util';
import { SECRET_OVERLAP_DEFAULT_SECONDS, SECRET_OVERLAP_MAX_SECONDS } from '@dw/contracts';
import type { TokenRotationPublisher } from '@dw/messaging';
import type pg from 'pg';
import { connectClient, createPool, databaseName } from '@dw/db';
import { createMerchant, type IssuedCredentials, rotateApiToken, rotateSigningSecret } from '../db/merchant-admin';
import { CliFailure, UsageError, databaseUrlFrom, reportFailure } from './cli-support';

export const MERCHANT_HELP = `Usage: merchant create --name <name>
       merchant rotate-token --merchant <merchantId>
       merchant rotate-secret --merchant <merchantId> [--overlap <duration>]

Each prints one line of JSON on stdout:
  {"merchantId":"<uuid>","apiToken":"dwk_…","callbackSigningSecret":"whsec_…"}
create        a new merchant with a new API token and callback signing secret.
rotate-token  a new API token (the old one stops working); callbackSigningSecret is the
              unchanged current secret.
rotate-secret a new callback signing secret. apiToken is left out: only the token's hash is
              stored, so the token in force cannot be shown again (it keeps working).
              --overlap: how long the old secret keeps signing beside the new one (callbacks
              carry both signatures): 24h by default, at most 7d; 0 revokes it at once (a leaked
              secret). Durations: 90s, 30m, 24h, 7d, or plain seconds.
The token and secret are shown only here: store them now.
rotate-token first connects to RabbitMQ (AMQP_URL, AMQP_PREFIX), through which it tells every
gateway to forget the old token: when RabbitMQ cannot be reached nothing is rotated (exit 1).
Reads DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/deposit_withdraw).
Exit codes: 0 done, 1 failed (unknown merchant, database or RabbitMQ unreachable), 2 bad usage,
3 the token was rotated and printed but the gateways were not told (the broker failed in between):
the old token may keep working for up to TOKEN_CACHE_TTL_MS (30 s by default).
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_NAME = 200; // merchants.name is VARCHAR(200)

export type MerchantCliHooks = {
  /** Opened before a token rotation, so that no rotation happens that the gateways cannot hear of. */
  openTokenBroadcast(): Promise<TokenRotationPublisher>;
};

type Command = { run(db: pg.Pool): Promise<IssuedCredentials | null>; merchantId?: string; rotatesToken: boolean };

function parseCommand(argv: string[]): Command | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { name: { type: 'string' }, merchant: { type: 'string' }, overlap: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) return 'help';
  const [command, ...extra] = positionals;
  if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (command === 'create') {
    const name = values.name?.trim();
    if (!name) throw new UsageError('create needs --name <name>');
    if (name.length > MAX_NAME) throw new UsageError(`--name is longer than ${MAX_NAME} characters`);
    return { run: (db) => createMerchant(db, name), rotatesToken: false };
  }
  if (command === 'rotate-token' || command === 'rotate-secret') {
    const merchantId = values.merchant?.trim();
    if (!merchantId) throw new UsageError(`${command} needs --merchant <merchantId>`);
    if (!UUID.test(merchantId)) throw new UsageError(`--merchant must be a merchant id (a UUID), got ${JSON.stringify(merchantId)}`);
    const id = merchantId.toLowerCase();
    if (command === 'rotate-token') {
      if (values.overlap !== undefined) throw new UsageError('--overlap applies only to rotate-secret');
      return { run: (db) => rotateApiToken(db, id), merchantId, rotatesToken: true };
    }
    const overlap = values.overlap === undefined ? SECRET_OVERLAP_DEFAULT_SECONDS : parseOverlap(values.overlap);
    return { run: (db) => rotateSigningSecret(db, id, overlap), merchantId, rotatesToken: false };
  }
  throw new UsageError(command ? `unknown command ${command}` : 'missing command (create, rotate-token or rotate-secret)');
}

const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** "24h", "30m", "90s", "7d" or plain seconds → seconds, 0…SECRET_OVERLAP_MAX_SECONDS. */
export function parseOverlap(text: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!match) throw new UsageError(`--overlap must be a duration like 24h, 30m, 90s, 7d or 0, got ${JSON.stringify(text)}`);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2]!]!;
  if (seconds > SECRET_OVERLAP_MAX_SECONDS) throw new UsageError(`--overlap is at most 7d (${SECRET_OVERLAP_MAX_SECONDS} s)`);
  return seconds;
}

/** Fails with one clear line when PostgreSQL or the database is missing, before the pool's errors. */
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
  let db: pg.Pool | undefined;
  let broadcast: TokenRotationPublisher | undefined;
  try {
    const command = parseCommand(argv);
    if (command === 'help') {
      process.stdout.write(MERCHANT_HELP);
      return 0;
    }
    await checkDatabase(url);
    broadcast = command.rotatesToken ? await openBroadcast(hooks) : undefined;
    db = createPool(url, 1);
    const issued = await command.run(db);
    if (!issued) throw new CliFailure(`no merchant with id ${command.merchantId}`);
    const told = broadcast ? await tellGateways(broadcast, issued.merchantId) : true;
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return told ? 0 : 3;
  } catch (error) {
    const failure = error instanceof TypeError && 'code' in error ? new UsageError(error.message) : error; // parseArgs
    return reportFailure('merchant', failure, url);
  } finally {
    await db?.end();
    await broadcast?.close();
  }
}

async function openBroadcast(hooks: MerchantCliHooks): Promise<TokenRotationPublisher> {
  try {
    return await hooks.openTokenBroadcast();
  } catch (error) {
    throw new CliFailure(`${describe(error)}: nothing was rotated, since the gateways could not be told to forget the old token`);
  }
}

// The rotation has committed and the new token is valid: a failed broadcast must not lose it, so
// the credentials are still printed, and stderr and the exit code (3) say what it means.
async function tellGateways(broadcast: TokenRotationPublisher, merchantId: string): Promise<boolean> {
  try {
    await broadcast.publish(merchantId);
    return true;
  } catch (error) {
    process.stderr.write(
      `merchant: the token was rotated, but the gateways were not told (${describe(error)}): ` +
        'the old token may keep working for up to TOKEN_CACHE_TTL_MS (30 s by default)\n',
    );
    return false;
  }
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
