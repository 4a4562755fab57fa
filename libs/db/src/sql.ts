/**
 * How the service runs SQL: statements built with Prisma's SQL template tag (sql-template-tag:
 * text with $n placeholders plus its values, nothing more) and run on a plain pg pool. The Prisma
 * client is never used at runtime: its first query loads the WASM query compiler (+63 MB RSS for
 * raw queries, +90 MB for model queries) and `$queryRaw` took about twice the CPU of the same SQL
 * on the pool (docs/decisions.md).
 *
 * What pg hands back differs from `$queryRaw`: numeric and int8 come as strings, timestamptz as
 * Date, json/jsonb parsed. The statements therefore build what the API returns in SQL (amounts as
 * `::text`, instants through to_char, counts as `::int`), as transactionJson does.
 */
import { Sql, empty, join, raw, sql } from '@prisma/client-runtime-utils';
import type pg from 'pg';

export { Sql, empty, join, raw, sql };

/** Runs `statement` and resolves with its rows; `name` makes it a prepared statement (per session). */
export async function query<T extends pg.QueryResultRow>(db: pg.Pool | pg.PoolClient, statement: Sql, name?: string): Promise<T[]> {
  const { rows } = await db.query<T>({ name, text: statement.text, values: statement.values as unknown[] });
  return rows;
}
