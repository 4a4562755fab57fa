// The one way the service opens PostgreSQL: a pg pool with the shared timeouts of @dw/config.
import { postgresPoolOptions } from '@dw/config';
import pg from 'pg';

export interface PoolOptions {
  /** What pg_stat_activity shows (default dw-transactions-svc). */
  applicationName?: string;
  /** Told when the server drops an idle session. */
  onIdleError?: (err: Error) => void;
}

/** A pool on `databaseUrl` of at most `poolSize` connections (pg's default, 10, when omitted). */
export function createPool(databaseUrl: string, poolSize?: number, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool(postgresPoolOptions(databaseUrl, poolSize ?? 10, opts.applicationName ?? 'dw-transactions-svc'));
  // An idle session the server dropped is reported here; unheard, the event would kill the process.
  // The next query opens a fresh session.
  pool.on('error', opts.onIdleError ?? (() => undefined));
  return pool;
}
