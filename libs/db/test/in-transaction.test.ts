import { randomBytes } from 'node:crypto';
import { dropTestDatabase } from '@dw/testing';
import { Client, Pool } from 'pg';
import { inTransaction, rolledBack } from '../src';

const SERVER = 'postgresql://postgres@127.0.0.1:5432';
const name = `dw_postgres_lib_${randomBytes(4).toString('hex')}`;
let admin: Client;
let pool: Pool;

beforeAll(async () => {
  admin = new Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  pool = new Pool({ connectionString: `${SERVER}/${name}`, max: 2 });
  pool.on('error', () => undefined); // idle sessions: the pool's own concern, not under test
  await pool.query('CREATE TABLE items (n int PRIMARY KEY)');
});

afterAll(async () => {
  await pool?.end();
  await dropTestDatabase(admin, name);
  await admin?.end();
});

const count = async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM items')).rows[0]!.n;

describe('inTransaction', () => {
  it('commits what the work wrote and returns its result', async () => {
    const result = await inTransaction(pool, async (client) => {
      await client.query('INSERT INTO items VALUES (1), (2)');
      return 'done';
    });
    expect(result).toBe('done');
    expect(await count()).toBe(2);
  });

  it('rolls back when the work throws, and hands the error on', async () => {
    await expect(
      inTransaction(pool, async (client) => {
        await client.query('INSERT INTO items VALUES (3)');
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await count()).toBe(2);
  });

  it('survives the session being terminated mid-transaction: the caller gets an error, the process no unheard error event, the pool a fresh session', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      let killedPid = 0;
      await expect(
        inTransaction(pool, async (client) => {
          killedPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          await client.query('INSERT INTO items VALUES (4)');
          await admin.query('SELECT pg_terminate_backend($1)', [killedPid]);
          await new Promise((resolve) => setTimeout(resolve, 200)); // the 'error' event arrives while idle in the transaction
          await client.query('INSERT INTO items VALUES (5)');
        }),
      ).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(uncaught).toEqual([]);
      const pid = await inTransaction(pool, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      expect(pid).not.toBe(killedPid);
      expect(await count()).toBe(2);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('rolledBack', () => {
  it('returns what the work found, and keeps none of its writes', async () => {
    const seen = await rolledBack(pool, async (client) => {
      await client.query('INSERT INTO items VALUES (6)');
      return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM items')).rows[0]!.n;
    });
    expect(seen).toBe(3);
    expect(await count()).toBe(2);
  });

  it('hands on the error of a write the database refused, and keeps nothing', async () => {
    await expect(rolledBack(pool, (client) => client.query('INSERT INTO items VALUES (7), (1)'))).rejects.toMatchObject({ code: '23505' });
    expect(await count()).toBe(2);
  });
});
