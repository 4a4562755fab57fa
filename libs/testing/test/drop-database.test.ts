import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { dropTestDatabase } from '../src';

const SERVER = 'postgresql://postgres@127.0.0.1:5432';
const ROUNDS = 30;

describe('dropTestDatabase', () => {
  it('drops a database right after a test ended its pool without the pool seeing the server terminate its connections', async () => {
    const admin = new Client({ connectionString: `${SERVER}/postgres` });
    await admin.connect();
    const idleErrors: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const name = `dw_testing_drop_${randomBytes(4).toString('hex')}`;
        await admin.query(`CREATE DATABASE "${name}"`);
        const pool = new Pool({ connectionString: `${SERVER}/${name}` });
        // A test's pool usually has no listener; an 'error' here is what would have been uncaught.
        pool.on('error', (err) => idleErrors.push(`${(err as { code?: string }).code}: ${err.message}`));
        await Promise.all([1, 2, 3].map(() => pool.query('SELECT 1')));
        await pool.end();
        await dropTestDatabase(admin, name);
        const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        expect(left.rowCount).toBe(0);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(idleErrors).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it('still drops a database a connection was left open on', async () => {
    const admin = new Client({ connectionString: `${SERVER}/postgres` });
    await admin.connect();
    const name = `dw_testing_drop_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE "${name}"`);
    const leaked = new Client({ connectionString: `${SERVER}/${name}` });
    const ended = new Promise((resolve) => leaked.on('error', resolve));
    await leaked.connect();
    try {
      await dropTestDatabase(admin, name);
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount).toBe(0);
      expect(await ended).toMatchObject({ code: '57P01' });
    } finally {
      await admin.end();
    }
  }, 15_000);
});
