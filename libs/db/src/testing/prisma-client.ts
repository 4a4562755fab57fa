// A Prisma client over the pg driver adapter (no engine binary), for tests that set up and inspect
// rows. No service builds one: every runtime query runs on a plain pg pool (src/sql.ts says why).
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { createPool } from '../pool';

export { Prisma, PrismaClient } from '../generated/prisma/client.js';

/**
 * A PrismaClient on `databaseUrl` with a pg pool of at most `poolSize` connections (pg's default,
 * 10, when omitted). Call `$disconnect()` to close the pool.
 */
export function createPrisma(databaseUrl: string, poolSize?: number): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(createPool(databaseUrl, poolSize), { disposeExternalPool: true }) });
}
