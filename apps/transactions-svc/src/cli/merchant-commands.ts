// The merchant CLI's commands: parse, run against the database, print exactly one JSON line on
// stdout on success and nothing on stdout on failure.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { PRINTABLE_PATTERN, SECRET_OVERLAP_DEFAULT_SECONDS, SECRET_OVERLAP_MAX_SECONDS } from '@dw/contracts';
import type { TokenRotationPublisher } from '@dw/messaging';
import type pg from 'pg';
import { createPool } from '@dw/db';
import { createMerchant, type IssuedCredentials, rotateApiToken, rotateSigningSecret } from '../db/merchant-admin';
import { isCurrencyCap, MAX_CURRENCIES_PER_MERCHANT } from '../domain/currency-cap';
import { adjustBalance, LedgerCommandError, setCreditLimit } from '../domain/ledger-admin';
import { CliFailure, UsageError, checkDatabase, databaseUrlFrom, joinNegativeValues, reportFailure, usageFromParseArgs } from './cli-support';

export const MERCHANT_HELP = `Usage: merchant create --name <name> [--credit-limit <amount>]
       merchant rotate-token --merchant <merchantId>
       merchant rotate-secret --merchant <merchantId> [--overlap <duration>]
       merchant set-credit-limit --merchant <merchantId> --limit <amount> [--currency <CUR>]
       merchant adjust-balance --merchant <merchantId> --currency <CUR> --amount <signed amount>
                               --reason <text> --reference <ref> [--actor <who>]

create, rotate-token and rotate-secret print one line of JSON on stdout:
  {"merchantId":"<uuid>","apiToken":"dwk_…","callbackSigningSecret":"whsec_…"}
create        a new merchant with a new API token and callback signing secret; --credit-limit
              (default 0) is how far below zero available may go in every currency that has no
              limit of its own.
rotate-token  a new API token (the old one stops working). callbackSigningSecret is null:
              secrets are shown once, when issued (the one in force keeps signing).
rotate-secret a new callback signing secret. apiToken is null: only the token's hash is
              stored, so the token in force cannot be shown again (it keeps working).
              --overlap: how long the old secret keeps signing beside the new one (callbacks
              carry both signatures): 24h by default, at most 7d; 0 revokes it at once (a leaked
              secret). Durations: 90s, 30m, 24h, 7d (a unit is required, but for 0).
set-credit-limit  the limit of one currency (--currency), or the default of every currency
              without its own; prints {"merchantId","currency"|null,"creditLimit"}. A limit
              below what a balance it governs already uses (available below -limit) is refused
              (exit 1), naming the lowest it allows now.
adjust-balance  an operator's correction: one ledger entry moving --amount (signed: + adds to
              available, - takes from it; --amount -10 and --amount=-10 alike) between available
              and the platform's adjustments account, with --reason, --reference (the same reference again answers the same
              entry, "replayed":true; with other values it is refused) and --actor (default: this
              OS user@host). A debit is refused when it would take available below -creditLimit; a credit never is. Prints
              {"merchantId","entry":{…the statement's entry…},"replayed":false}.
Amounts are decimal strings (at most 18 integer and 8 fraction digits), never rounded.
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

type Command = { run(db: pg.Pool): Promise<object | null>; merchantId?: string; rotatesToken: boolean };

const LIMIT = /^[0-9]{1,18}(\.[0-9]{1,8})?$/;
const SIGNED_AMOUNT = /^[+-]?(?=[0-9.]*[1-9])[0-9]{1,18}(\.[0-9]{1,8})?$/;
const CURRENCY = /^[A-Z0-9]{3,10}$/;
const PRINTABLE = new RegExp(PRINTABLE_PATTERN, 'u');

/** `shape` is what the usage line shows after the flag: `--limit <amount>`. */
function required(value: string | undefined, flag: string, shape: string, command: string): string {
  const trimmed = value?.trim();
  if (!trimmed) throw new UsageError(`${command} needs --${flag} ${shape}`);
  return trimmed;
}

/**
 * A value recorded or counted as typed (an amount, a limit, a reason, a reference): white space or a
 * control character around it is refused, as the API refuses ' 1', never quietly trimmed into a value
 * the operator did not type. Identifiers (a merchant id, a currency) are still trimmed.
 */
function exact(value: string | undefined, flag: string, shape: string, command: string): string {
  const trimmed = required(value, flag, shape, command);
  if (value !== trimmed) throw new UsageError(`--${flag} must not begin or end with white space, got ${JSON.stringify(value)}`);
  return trimmed;
}

function merchantIdOf(value: string | undefined, command: string): string {
  const merchantId = required(value, 'merchant', '<merchantId>', command);
  if (!UUID.test(merchantId)) throw new UsageError(`--merchant must be a merchant id (a UUID), got ${JSON.stringify(merchantId)}`);
  return merchantId.toLowerCase();
}

function matching(value: string, pattern: RegExp, flag: string, what: string): string {
  if (!pattern.test(value)) throw new UsageError(`--${flag} must be ${what}, got ${JSON.stringify(value)}`);
  return value;
}

/** Length in characters (code points), as PostgreSQL's varchar and the API's schemas count it; .length counts UTF-16 units (an emoji is 2). */
const characters = (s: string) => [...s].length;

function text(value: string | undefined, flag: string, command: string, max: number): string {
  const t = exact(value, flag, '<text>', command);
  if (characters(t) > max || !PRINTABLE.test(t)) throw new UsageError(`--${flag} must be 1–${max} printable characters`);
  return t;
}

/**
 * A credit limit as typed exactly (exact()), written as it is stored and printed back: without
 * leading zeros (`05` is `5`), as PostgreSQL's numeric writes it.
 */
function limitOf(value: string | undefined, flag: string, command: string): string {
  return matching(exact(value, flag, '<amount>', command), LIMIT, flag, 'a decimal amount ≥ 0 like 500 or 1000.50').replace(/^0+(?=\d)/, '');
}

type Values = Record<string, string | boolean | undefined>;
const str = (values: Values, key: string) => values[key] as string | undefined;

function moneyCommand(command: string, values: Values): Command {
  const merchantId = merchantIdOf(str(values, 'merchant'), command);
  const currencyFlag = str(values, 'currency')?.trim();
  if (command === 'set-credit-limit') {
    const limit = limitOf(str(values, 'limit'), 'limit', command);
    const currency = currencyFlag === undefined ? null : matching(currencyFlag, CURRENCY, 'currency', '3–10 characters A–Z, 0–9');
    return { run: (db) => setCreditLimit(db, merchantId, limit, currency), rotatesToken: false };
  }
  const currency = matching(required(currencyFlag, 'currency', '<CUR>', command), CURRENCY, 'currency', '3–10 characters A–Z, 0–9');
  // `+10` is `10`: the sign is dropped before the amount is stored or compared with a replay's.
  const amount = matching(exact(str(values, 'amount'), 'amount', '<signed amount>', command), SIGNED_AMOUNT, 'amount', 'a signed decimal amount, not zero, like 25.00 or -10').replace(/^\+/, '');
  const reason = text(str(values, 'reason'), 'reason', command, 500);
  const reference = text(str(values, 'reference'), 'reference', command, 128);
  const actor = str(values, 'actor') === undefined ? defaultActor() : text(str(values, 'actor'), 'actor', command, 200);
  return {
    run: async (db) => {
      const { entry, replayed } = await adjustBalance(db, { merchantId, currency, amount, reason, reference, actor });
      return { merchantId, entry, replayed };
    },
    rotatesToken: false,
  };
}

function defaultActor(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry (a container's arbitrary uid)
  }
  return `${user}@${os.hostname()}`.slice(0, 200);
}

const OPTIONS = {
  name: { type: 'string' },
  merchant: { type: 'string' },
  overlap: { type: 'string' },
  'credit-limit': { type: 'string' },
  limit: { type: 'string' },
  currency: { type: 'string' },
  amount: { type: 'string' },
  reason: { type: 'string' },
  reference: { type: 'string' },
  actor: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
const VALUE_OPTIONS = new Set(Object.entries(OPTIONS).flatMap(([name, o]) => (o.type === 'string' ? [name] : [])));

function parseCommand(argv: string[]): Command | 'help' {
  const { values, positionals, tokens } = parseArgs({ args: joinNegativeValues(argv, VALUE_OPTIONS), options: OPTIONS, allowPositionals: true, tokens: true });
  if (values.help) return 'help';
  // parseArgs keeps the last of a repeated option: `--merchant A --merchant B` would act on B alone.
  const given = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given twice: give each option once`);
    given.add(token.name);
  }
  const [command, ...extra] = positionals;
  if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (command === 'create') {
    const name = values.name?.trim();
    if (!name) throw new UsageError('create needs --name <name>');
    // Printable as the API's text fields are (no control characters): the name is shown in logs and pages.
    if (characters(name) > MAX_NAME || !PRINTABLE.test(name)) throw new UsageError(`--name must be 1–${MAX_NAME} printable characters`);
    const creditLimit = values['credit-limit'] === undefined ? '0' : limitOf(values['credit-limit'], 'credit-limit', command);
    return { run: (db) => createMerchant(db, name, creditLimit), rotatesToken: false };
  }
  if (command === 'set-credit-limit' || command === 'adjust-balance') return moneyCommand(command, values);
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
  throw new UsageError(command ? `unknown command ${command}` : 'missing command (create, rotate-token, rotate-secret, set-credit-limit or adjust-balance)');
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * "24h", "30m", "90s", "7d" or "0" → seconds, 0…SECRET_OVERLAP_MAX_SECONDS. A number without its
 * unit is refused (but 0): `24` meant as hours would revoke the old secret after 24 seconds.
 */
export function parseOverlap(text: string): number {
  const match = /^(?:(\d{1,9})([smhd])|(0+))$/.exec(text.trim());
  if (match?.[3] !== undefined) return 0;
  if (!match) throw new UsageError(`--overlap must be a duration like 24h, 30m, 90s, 7d or 0, got ${JSON.stringify(text)}`);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2]!]!;
  if (seconds > SECRET_OVERLAP_MAX_SECONDS) throw new UsageError(`--overlap is at most 7d (${SECRET_OVERLAP_MAX_SECONDS} s)`);
  return seconds;
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
    const issued = await command.run(db).catch((error: unknown) => {
      if (error instanceof LedgerCommandError) throw new CliFailure(error.message);
      // The database's rule, not its connection: told as the API tells it (currency-cap.ts).
      if (isCurrencyCap(error)) {
        throw new CliFailure(`refused: the merchant already holds balances in ${MAX_CURRENCIES_PER_MERCHANT} currencies, the most one merchant may; use one of them`);
      }
      throw error;
    });
    if (!issued) throw new CliFailure(`no merchant with id ${command.merchantId}`);
    const told = broadcast && command.merchantId ? await tellGateways(broadcast, command.merchantId) : true;
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return told ? 0 : 3;
  } catch (error) {
    return reportFailure('merchant', usageFromParseArgs(error), url);
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
