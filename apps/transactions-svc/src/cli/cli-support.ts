// What the two database CLIs share: reading DATABASE_URL, usage errors, and turning failures into
// one clear line on stderr (never a stack trace, never the password) plus an exit code.
import { DEFAULT_DATABASE_URL } from '@dw/config';
import { DatabaseUnreachableError } from '@dw/db';
import { lastEnginePanic } from '@dw/db/migrations';

/** Wrong arguments: the message says what to fix; exit code 2. */
export class UsageError extends Error {}

/** A well-understood failure (e.g. no such merchant): its message is printed as is; exit code 1. */
export class CliFailure extends Error {}

export function databaseUrlFrom(env: NodeJS.ProcessEnv): string {
  return env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
}

/** Prints `error` as one line (or a few, for engine errors) on stderr; returns the exit code. */
export function reportFailure(program: string, error: unknown, databaseUrl: string): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${program}: ${error.message}\nRun with --help for usage.\n`);
    return 2;
  }
  const message = error instanceof DatabaseUnreachableError || error instanceof CliFailure ? error.message : describeUnexpected(error);
  process.stderr.write(`${program}: ${hidePassword(message, databaseUrl)}\n`);
  return 1;
}

function describeUnexpected(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // The WASM engine appends a Rust span trace ("   0: schema_engine_wasm::...") to its messages.
  const text = error.message.split(/\n\s+0: /)[0]!.trim();
  return error.message === 'unreachable' ? `schema engine crashed: ${lastEnginePanic() ?? 'no panic message'}` : text;
}

function hidePassword(message: string, databaseUrl: string): string {
  try {
    const password = decodeURIComponent(new URL(databaseUrl).password);
    return password ? message.split(password).join('***') : message;
  } catch {
    return message;
  }
}
