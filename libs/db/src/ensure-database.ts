// Creates the database named in a connection string when it does not exist yet (`prisma migrate
// deploy` does too; the migrate CLI calls this before applying migrations).
import pg from 'pg';
import { databaseName, quoteIdent, serverAddress, withDatabase } from './database-url';

const CONNECT_TIMEOUT_MS = 5000;
// Error codes that mean "nothing usable answers at that address".
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** PostgreSQL could not be reached at all; the message names the address, never the password. */
export class DatabaseUnreachableError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`PostgreSQL is not reachable at ${address} (${reason})`);
    this.name = 'DatabaseUnreachableError';
  }
}

export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (typeof code === 'string' && UNREACHABLE_CODES.has(code)) || /timeout expired|Connection terminated/i.test(message);
}

/** Connects a pg.Client, turning "nobody answers" into DatabaseUnreachableError. */
export async function connectClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined); // a dropped idle connection must not crash the process
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    if (isUnreachable(error)) throw new DatabaseUnreachableError(serverAddress(url), describe(error));
    throw error;
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}

/**
 * Creates the database of `url` unless it exists. Returns true when this call created it.
 * Safe when several processes race: the loser's "already exists" counts as success.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  const admin = await connectClient(withDatabase(url, 'postgres'));
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    return true;
  } catch (error) {
    // 42P04 duplicate_database; 23505 when the race is lost inside pg_database's unique index.
    const code = (error as { code?: unknown }).code;
    if (code === '42P04' || code === '23505') return false;
    throw error;
  } finally {
    await admin.end();
  }
}
