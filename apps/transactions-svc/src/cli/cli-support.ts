// What the two database CLIs share: reading DATABASE_URL, usage errors, and turning failures into
// one clear line on stderr (never a stack trace, never the password) plus an exit code.
import { DEFAULT_DATABASE_URL } from '@dw/config';
import { connectClient, databaseName, serverAddress } from '@dw/db';
import { DatabaseError } from 'pg';

/** Wrong arguments: the message says what to fix; exit code 2. */
export class UsageError extends Error {}

/** A well-understood failure (e.g. no such merchant): its message is printed as is; exit code 1. */
export class CliFailure extends Error {}

/**
 * A refusal of node's parseArgs (a TypeError with an ERR_PARSE_ARGS_* code) as a usage error. An
 * unknown option is named alone: node's own text goes on to suggest `-- "--opt"`, which is not how
 * these commands take anything (and its quotes do not pair).
 */
export function usageFromParseArgs(error: unknown): unknown {
  if (!(error instanceof TypeError) || !('code' in error)) return error;
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(error.message) : null;
  return new UsageError(unknown ? `unknown option ${unknown[1]}` : error.message);
}

export function databaseUrlFrom(env: NodeJS.ProcessEnv): string {
  return env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
}

/** Prints `error` as one line on stderr; returns the exit code. */
export function reportFailure(program: string, error: unknown, databaseUrl: string): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${program}: ${error.message}\nRun with --help for usage.\n`);
    return 2;
  }
  // Our errors (DatabaseUnreachableError, CliFailure, a failed migration) say what happened; pg's
  // (DatabaseError: what the server itself sent) say it without saying who (`role "x" does not
  // exist`), so those name PostgreSQL and its address.
  const said = error instanceof Error ? error.message : String(error);
  const message = error instanceof DatabaseError ? `PostgreSQL at ${serverAddress(databaseUrl)} (DATABASE_URL): ${said}` : said;
  process.stderr.write(`${program}: ${hidePassword(message, databaseUrl)}\n`);
  return 1;
}

function hidePassword(message: string, databaseUrl: string): string {
  try {
    const password = decodeURIComponent(new URL(databaseUrl).password);
    return password ? message.split(password).join('***') : message;
  } catch {
    return message;
  }
}

/**
 * `--amount -10` as `--amount=-10`: node's parseArgs refuses an option's value that starts with a
 * dash ("argument is ambiguous"), and a signed amount is the one value here that does. Only a
 * negative number right after an option that takes a value is joined; anything else is left to
 * parseArgs as it is.
 */
export function joinNegativeValues(argv: readonly string[], valueOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg.startsWith('--') && valueOptions.has(arg.slice(2)) && next !== undefined && /^-[0-9.]/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Fails with one clear line when PostgreSQL or the database is missing, before the pool's errors. */
export async function checkDatabase(url: string): Promise<void> {
  const client = await connectClient(url).catch((error: unknown) => {
    if ((error as { code?: unknown }).code === '3D000') {
      throw new CliFailure(`database ${databaseName(url)} does not exist: run npm run db:migrate first`);
    }
    throw error;
  });
  await client.end();
}
