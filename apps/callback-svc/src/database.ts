import { postgresPoolOptions, type CallbackConfig } from '@dw/config';
import type { MessagingLogger } from '@dw/messaging';
import { Pool } from 'pg';

/**
 * The PostgreSQL pool (delivery status and attempt log). pg reports a pooled connection dropped by
 * the server as an 'error' event; unheard, that event would kill the process, and the next query
 * opens a fresh connection anyway.
 */
export function createPool(config: Pick<CallbackConfig, 'databaseUrl' | 'databasePoolSize'>, logger: MessagingLogger): Pool {
  const pool = new Pool(postgresPoolOptions(config.databaseUrl, config.databasePoolSize, 'dw-callback-svc'));
  pool.on('error', (err) => logger.warn({ err: { message: err.message } }, 'idle PostgreSQL connection lost'));
  return pool;
}
