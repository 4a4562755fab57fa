// The one way the service builds its Prisma client: the pg driver adapter, no engine binary.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { Prisma, PrismaClient } from '../generated/prisma/client.js';

/**
 * A PrismaClient on `databaseUrl` with a pg pool of at most `poolSize` connections (pg's default,
 * 10, when omitted). Call `$disconnect()` to close the pool.
 */
export function createPrisma(databaseUrl: string, poolSize?: number): PrismaClient {
  const adapter = new PrismaPg(poolSize === undefined ? { connectionString: databaseUrl } : { connectionString: databaseUrl, max: poolSize });
  return new PrismaClient({ adapter });
}
