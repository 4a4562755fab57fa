// The driver adapter handed to Prisma's WASM schema engine: @prisma/adapter-pg with the corrections
// the engine needs, each explained where it is made:
// catalog result types, whole-script execution, one session per database, a real shadow database.
import { randomUUID } from 'node:crypto';
import { ColumnTypeEnum, type SqlDriverAdapter, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { quoteIdent, withDatabase } from '../database-url';

// adapter-pg refuses result columns of catalog types that the engine's own queries return:
// "char" (18), name (19) and void (2278, from pg_advisory_lock). void and name are only text to
// the engine, so they are relabelled as text (25). "char" must reach the engine as a Character
// column (it reads pg_constraint.contype with get_char and panics on text), which adapter-pg
// cannot express: its columns are relabelled as text here, remembered by their rows array (which
// adapter-pg passes through untouched) and retyped by withCharacterColumns below.
const VOID_OR_NAME = new Set([19, 2278]);
const CHAR_OID = 18;
const TEXT_OID = 25;
const charColumnsOfRows = new WeakMap<object, number[]>();

type QueryResult = { fields?: Array<{ dataTypeID: number }>; rows?: object };

function relabelCatalogTypes(result: QueryResult | QueryResult[] | undefined): void {
  for (const one of Array.isArray(result) ? result : result ? [result] : []) {
    const charColumns: number[] = [];
    (one.fields ?? []).forEach((field, index) => {
      if (field.dataTypeID === CHAR_OID) charColumns.push(index);
      if (field.dataTypeID === CHAR_OID || VOID_OR_NAME.has(field.dataTypeID)) field.dataTypeID = TEXT_OID;
    });
    if (charColumns.length > 0 && one.rows) charColumnsOfRows.set(one.rows, charColumns);
  }
}

class CatalogTolerantClient extends pg.Client {
  // pg-pool calls query(text, values, callback); adapter code may also use the promise form.
  override query(...args: unknown[]): never {
    const last = args[args.length - 1];
    const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
    if (typeof last === 'function') {
      const callback = last as (err: Error | null, res?: QueryResult) => void;
      const wrapped = (err: Error | null, res?: QueryResult) => {
        relabelCatalogTypes(res);
        callback(err, res);
      };
      return query.apply(this, [...args.slice(0, -1), wrapped]) as never;
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) {
      return result.then((res: QueryResult) => {
        relabelCatalogTypes(res);
        return res;
      }) as never;
    }
    return result as never; // a Submittable: returned as pg returns it
  }
}

// One connection per database: the engine takes a session-level advisory lock and must release it
// on the same session; a migration script then runs on that session too, as with the native engine.
function connectOne(url: string, onDispose?: () => Promise<void>): Promise<SqlDriverAdapter> {
  const factory = new PrismaPg({ connectionString: url, max: 1, Client: CatalogTolerantClient });
  return factory.connect().then((adapter) => wholeScripts(withCharacterColumns(adapter), onDispose));
}

// adapter-pg's executeScript splits a script on ";", which breaks dollar-quoted function bodies
// (our outbox trigger), and the engine runs each whole migration.sql through it. Send the script
// as one simple-protocol query (no bind values), like the native engine's raw command: PostgreSQL
// then runs the multi-statement script as one implicit transaction unless it has its own COMMIT.
function wholeScripts(adapter: SqlDriverAdapter, onDispose?: () => Promise<void>): SqlDriverAdapter {
  const dispose = adapter.dispose.bind(adapter);
  adapter.executeScript = async (script: string) => {
    await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
  };
  adapter.dispose = async () => {
    await dispose();
    await onDispose?.();
  };
  return adapter;
}

function withCharacterColumns(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const queryRaw = adapter.queryRaw.bind(adapter);
  adapter.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const index of charColumnsOfRows.get(result.rows) ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  return adapter;
}

export type MigrationAdapterFactory = SqlMigrationAwareDriverAdapterFactory & {
  /** Disposes every connection the engine opened (it does not close them itself) and drops shadows. */
  closeAll(): Promise<void>;
};

/**
 * A migration-aware adapter factory for `url`. Its shadow database is a real throwaway database
 * (adapter-pg's own would reuse `url`'s database as the "shadow", since a connectionString wins
 * over the `database` option), created on demand and dropped on dispose.
 */
export function migrationAdapterFactory(url: string): MigrationAdapterFactory {
  const open = new Set<SqlDriverAdapter>();
  const track = (adapter: SqlDriverAdapter) => {
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      if (!open.delete(adapter)) return; // already disposed
      await dispose();
    };
    open.add(adapter);
    return adapter;
  };
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    connect: async () => track(await connectOne(url)),
    connectToShadowDb: async () => {
      const shadow = `prisma_migrate_shadow_db_${randomUUID()}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(shadow)}`);
      } finally {
        await admin.end();
      }
      return track(await connectOne(withDatabase(url, shadow), () => dropDatabase(url, shadow)));
    },
    closeAll: async () => {
      await Promise.allSettled([...open].map((adapter) => adapter.dispose()));
    },
  };
}

async function dropDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
