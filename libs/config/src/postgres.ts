/**
 * How every PostgreSQL pool of every service connects: no session may wait on a dead or
 * black-holed database for as long as TCP takes to give up (minutes), and none may hold locks
 * forever. Plain data (pg.PoolConfig's names), so this library needs no driver.
 */
export interface PostgresPoolOptions {
  connectionString: string;
  max: number;
  application_name: string;
  /** Opening a connection. */
  connectionTimeoutMillis: number;
  /** Server-side bound on one statement. */
  statement_timeout: number;
  /** Client-side bound on one query's round trip, for a server that stopped answering. */
  query_timeout: number;
  /** Server-side bound on a session idling inside a transaction (it holds its locks meanwhile). */
  idle_in_transaction_session_timeout: number;
  keepAlive: boolean;
  keepAliveInitialDelayMillis: number;
}

export const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
export const POSTGRES_STATEMENT_TIMEOUT_MS = 30_000;

export function postgresPoolOptions(databaseUrl: string, max: number, applicationName: string): PostgresPoolOptions {
  return {
    connectionString: databaseUrl,
    max,
    application_name: applicationName,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    statement_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    query_timeout: POSTGRES_STATEMENT_TIMEOUT_MS + POSTGRES_CONNECT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: 2 * POSTGRES_STATEMENT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}
