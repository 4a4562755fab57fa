// The one way a service opens PostgreSQL: a pg pool whose sessions can neither wait on a dead or
// black-holed database for as long as TCP takes to give up (minutes), nor hold locks forever.
import pg from 'pg';

export const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
export const POSTGRES_STATEMENT_TIMEOUT_MS = 30_000;

export interface PoolOptions {
  /** What pg_stat_activity shows (default dw-transactions-svc). */
  applicationName?: string;
  /** Told when the server drops an idle session. */
  onIdleError?: (err: Error) => void;
  /** Planner settings of every session of the pool (`SET name = value` at connection). */
  settings?: Record<string, string>;
}

/** pg.PoolConfig of every pool: the timeouts above, keep-alive, and who is connecting. */
export function poolConfig(databaseUrl: string, max: number, applicationName: string): pg.PoolConfig {
  return {
    connectionString: databaseUrl,
    max,
    application_name: applicationName,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    // Server-side bound on one statement.
    statement_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    // Client-side bound on one round trip, for a server that stopped answering.
    query_timeout: POSTGRES_STATEMENT_TIMEOUT_MS + POSTGRES_CONNECT_TIMEOUT_MS,
    // A session idling inside a transaction holds its locks meanwhile.
    idle_in_transaction_session_timeout: 2 * POSTGRES_STATEMENT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/** A pool on `databaseUrl` of at most `poolSize` connections (pg's default, 10, when omitted). */
export function createPool(databaseUrl: string, poolSize?: number, opts: PoolOptions = {}): pg.Pool {
  const config = poolConfig(databaseUrl, poolSize ?? 10, opts.applicationName ?? 'dw-transactions-svc');
  const settings = Object.entries(opts.settings ?? {});
  if (settings.length > 0) config.options = settings.map(([name, value]) => `-c ${name}=${value}`).join(' ');
  const pool = new pg.Pool(config);
  // An idle session the server dropped is reported here; unheard, the event would kill the process.
  // The next query opens a fresh session.
  pool.on('error', opts.onIdleError ?? (() => undefined));
  return pool;
}
