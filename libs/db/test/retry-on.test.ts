// Which failures retryOn tries again (isConnectionLoss, isDeadlock), judged on errors the real pg
// driver and the real PostgreSQL raise: a session the server ends, a server that is not there, a
// deadlock the server breaks, a statement that is wrong.
import net from 'node:net';
import pg from 'pg';
import { CONNECTION_LOSS_DELAYS_MS, createPool, isConnectionLoss, isDeadlock, retryOn } from '../src';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

async function errorOf(statement: () => Promise<unknown>): Promise<unknown> {
  try {
    await statement();
  } catch (err) {
    return err;
  }
  throw new Error('the statement did not fail');
}

/** A port nothing listens on: taken, then let go. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('isConnectionLoss', () => {
  it('is true for a session the server ended (57P01) and for a server that refuses the connection', async () => {
    const victim = new pg.Client(SERVER);
    await victim.connect();
    victim.on('error', () => undefined);
    const { rows } = await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const admin = new pg.Client(SERVER);
    await admin.connect();
    const ended = errorOf(() => victim.query('SELECT pg_sleep(10)'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await admin.end();
    const terminated = await ended;
    expect((terminated as { code?: string }).code).toBe('57P01');
    expect(isConnectionLoss(terminated)).toBe(true);

    const pool = createPool(`postgresql://postgres@127.0.0.1:${await closedPort()}/postgres`, 1);
    const refused = await errorOf(() => pool.query('SELECT 1'));
    await pool.end();
    expect(isConnectionLoss(refused)).toBe(true);
  });

  it('is false for what the statement itself got wrong', async () => {
    const pool = createPool(SERVER, 1);
    const errors = [
      await errorOf(() => pool.query('SELEC 1')), // 42601 syntax error
      await errorOf(() => pool.query('SELECT 1/0')), // 22012 division by zero
      await errorOf(() => pool.query('SELECT $1::int', ['x'])), // 22P02
    ];
    await pool.end();
    expect(errors.map(isConnectionLoss)).toEqual([false, false, false]);
    expect(isConnectionLoss('not an error')).toBe(false);
  });
});

describe('retryOn(isConnectionLoss)', () => {
  it('sends the statement again until the database answers, within the bound', async () => {
    let tries = 0;
    const result = await retryOn(
      async () => {
        tries++;
        if (tries < 3) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        return 'answered';
      },
      { when: isConnectionLoss, withinMs: 1_000, delaysMs: [10] },
    );
    expect([result, tries]).toEqual(['answered', 3]);
  });

  it('gives up with the last error once the bound has passed, and never repeats a statement that was wrong', async () => {
    const pool = createPool(`postgresql://postgres@127.0.0.1:${await closedPort()}/postgres`, 1);
    let tries = 0;
    const started = Date.now();
    const lost = await errorOf(() => retryOn(() => (tries++, pool.query('SELECT 1')), { when: isConnectionLoss, withinMs: 300, delaysMs: [50] }));
    await pool.end();
    expect(isConnectionLoss(lost)).toBe(true);
    expect(tries).toBeGreaterThan(2);
    expect(Date.now() - started).toBeLessThan(1_000);

    const db = createPool(SERVER, 1);
    let wrongTries = 0;
    const wrong = await errorOf(() =>
      retryOn(() => (wrongTries++, db.query('SELEC 1')), { when: isConnectionLoss, withinMs: 1_000, delaysMs: CONNECTION_LOSS_DELAYS_MS }),
    );
    await db.end();
    expect([(wrong as { code?: string }).code, wrongTries]).toEqual(['42601', 1]);
  });
});

describe('retryOn(isDeadlock)', () => {
  // This file's own schema, dropped afterwards.
  const SCHEMA = `retry_on_${process.pid}`;
  const TABLE = `${SCHEMA}.rows`;
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client(SERVER);
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${SCHEMA}; CREATE TABLE ${TABLE} (id int PRIMARY KEY, n int NOT NULL); INSERT INTO ${TABLE} VALUES (1, 0), (2, 0)`);
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
  });

  /** Locks row `first`, waits until the other side holds its row, then asks for row `second`. */
  async function lockInOrder(client: pg.Client, first: number, second: number, bothHold: Promise<void>, holding: () => void): Promise<void> {
    await client.query('BEGIN');
    try {
      await client.query(`UPDATE ${TABLE} SET n = n + 1 WHERE id = $1`, [first]);
      holding();
      await bothHold;
      await client.query(`UPDATE ${TABLE} SET n = n + 1 WHERE id = $1`, [second]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  }

  it('runs a transaction again when PostgreSQL ended it to break a deadlock, so both sides commit; at most `tries` in all', async () => {
    const [a, b] = [new pg.Client(SERVER), new pg.Client(SERVER)];
    await Promise.all([a.connect(), b.connect()]);
    try {
      let held = 0;
      let release!: () => void;
      const bothHold = new Promise<void>((resolve) => (release = resolve));
      const holding = () => ++held === 2 && release();
      const tries = { a: 0, b: 0 };
      // Opposite orders: one of the first tries is ended with 40P01; its second try meets no one.
      await Promise.all([
        retryOn(() => (tries.a++, lockInOrder(a, 1, 2, bothHold, holding)), { when: isDeadlock, tries: 3 }),
        retryOn(() => (tries.b++, lockInOrder(b, 2, 1, bothHold, holding)), { when: isDeadlock, tries: 3 }),
      ]);
      expect(tries.a + tries.b).toBe(3);
      expect((await admin.query(`SELECT n FROM ${TABLE} ORDER BY id`)).rows).toEqual([{ n: 2 }, { n: 2 }]);

      let once = 0;
      const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
      const last = await errorOf(() => retryOn(() => (once++, Promise.reject(deadlock)), { when: isDeadlock, tries: 3 }));
      expect([last, once]).toEqual([deadlock, 3]);
      expect(isDeadlock(new Error('other'))).toBe(false);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });
});
