// Where the migrations are, for the runner and the authoring tool alike.
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * libs/db's prisma/ folder (schema.prisma and migrations/), found upwards from this code: beside it
 * in the repository (libs/db/src/…), or as libs/db/prisma from a bundle (apps/<app>/dist/…, in the
 * repository and in the image, which copies libs/db/prisma).
 */
export function findPrismaDir(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    for (const candidate of [path.join(dir, 'prisma'), path.join(dir, 'libs', 'db', 'prisma')]) {
      if (existsSync(path.join(candidate, 'schema.prisma'))) return candidate;
    }
    if (path.dirname(dir) === dir) throw new Error(`no prisma/schema.prisma or libs/db/prisma/schema.prisma above ${from}`);
  }
}

/** The folder of the migrations: prisma/migrations/<timestamp>_<name>/migration.sql. */
export function migrationsDir(): string {
  return path.join(findPrismaDir(), 'migrations');
}
