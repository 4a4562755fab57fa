// The migrations as files: prisma/migrations/<timestamp>_<name>/migration.sql, in name order (as
// Prisma lists them), each with Prisma's checksum, the SHA-256 hex of the file's bytes.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface MigrationFile {
  name: string;
  script: string;
  checksum: string;
}

export async function readMigrationFiles(dir: string): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  names.sort(); // code-unit order, as Prisma's; the names start with a UTC timestamp
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(path.join(dir, name, 'migration.sql'));
      return { name, script: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
}
