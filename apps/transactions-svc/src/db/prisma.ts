// The one way the service builds its Prisma client: the pg driver adapter, no engine binary.
import { postgresPoolOptions } from '@dw/config';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { Prisma, PrismaClient } from '../generated/prisma/client.js';

const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * A PrismaClient on `databaseUrl` with a pg pool of at most `poolSize` connections (pg's default,
 * 10, when omitted). Call `$disconnect()` to close the pool.
 */
export function createPrisma(databaseUrl: string, poolSize?: number): PrismaClient {
  const pool = new pg.Pool(postgresPoolOptions(databaseUrl, poolSize ?? 10, 'dw-transactions-svc'));
  // An idle session the server dropped is reported here; unheard, the event would kill the process.
  // The next query opens a fresh session.
  pool.on('error', () => undefined);
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(client, pool);
  return client;
}

/**
 * The pg pool under a client made by createPrisma. The hot path (the statement that writes a status
 * change with its event, delivery and outbox rows) runs on it directly: the same SQL through
 * `$queryRaw` took about twice the CPU per create (measured under load, same run), and the create
 * path is the service's busiest.
 */
export function sqlPool(db: PrismaClient): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('this PrismaClient was not made by createPrisma');
  return pool;
}
