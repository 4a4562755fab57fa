/**
 * The last line of defence (issue 8 §2): a value PostgreSQL refuses as data (SQLSTATE class 22)
 * maps to 400 validation_failed, never 500. The schemas refuse such values first; these errors are
 * provoked here by querying PostgreSQL directly on a pg pool, as a route does.
 */
import { ApiError } from '@dw/http-kit';
import { mapDatabaseError } from '../../src/db-errors';
import type pg from 'pg';
import { createPool, query, sql } from '@dw/db';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';

let database: TestDatabase;
let db: pg.Pool;
beforeAll(async () => {
  database = await createTestDatabase('db-errors');
  db = createPool(database.url, 2);
});
afterAll(async () => {
  await db?.end();
  await database?.drop();
});

async function errorOf(query: Promise<unknown>): Promise<unknown> {
  try {
    await query;
  } catch (err) {
    return err;
  }
  throw new Error('the query did not fail');
}

describe('mapDatabaseError', () => {
  it.each([
    ['22P02 invalid text for uuid', () => query(db, sql`SELECT ${'urn:uuid:7b0c0000-0000-4000-8000-000000000000'}::uuid`), '22P02'],
    ['22008 a date out of range', () => query(db, sql`SELECT ${'0000-01-01T00:00:00Z'}::timestamptz`), '22008'],
    ['22007 an invalid date format', () => query(db, sql`SELECT ${'the day after'}::timestamptz`), '22007'],
    ['22P05 an untranslatable character in jsonb', () => query(db, sql`SELECT ${'{"k":"\\u0000"}'}::jsonb`), '22P05'],
    ['22P02 a lone surrogate in jsonb', () => query(db, sql`SELECT ${'{"\\udfff":"v"}'}::jsonb`), '22P02'],
    ['22021 a NUL byte in text', () => query(db, sql`SELECT ${'a\u0000b'}::text`), '22021'],
  ])('maps %s to 400 validation_failed', async (_name, run, sqlState) => {
    const mapped = mapDatabaseError(await errorOf(run()));
    expect(mapped).toBeInstanceOf(ApiError);
    expect(mapped).toMatchObject({ statusCode: 400, code: 'validation_failed' });
    expect(mapped?.errors?.[0]?.message).toContain(`SQLSTATE ${sqlState}`);
  });

  it('leaves errors outside class 22 (a syntax error: 42601) unmapped, so they stay a logged 500', async () => {
    expect(mapDatabaseError(await errorOf(db.query('SELEC 1')))).toBeUndefined();
  });

  it('still maps a lost connection to 503', () => {
    expect(mapDatabaseError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toMatchObject({ statusCode: 503 });
  });
});
