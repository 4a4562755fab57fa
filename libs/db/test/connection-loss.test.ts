// Which failures retryOnConnectionLoss tries again, judged on errors the real pg driver and the real
// PostgreSQL raise: a session the server ends, a server that is not there, a statement that is wrong.
import net from 'node:net';
import pg from 'pg';
import { createPool, isConnectionLoss, retryOnConnectionLoss } from '../src';

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

describe('retryOnConnectionLoss', () => {
  it('sends the statement again until the database answers, within the bound', async () => {
    let tries = 0;
    const result = await retryOnConnectionLoss(
      async () => {
        tries++;
        if (tries < 3) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        return 'answered';
      },
      { withinMs: 1_000, delaysMs: [10] },
    );
    expect([result, tries]).toEqual(['answered', 3]);
  });

  it('gives up with the last error once the bound has passed, and never repeats a statement that was wrong', async () => {
    const pool = createPool(`postgresql://postgres@127.0.0.1:${await closedPort()}/postgres`, 1);
    let tries = 0;
    const started = Date.now();
    const lost = await errorOf(() => retryOnConnectionLoss(() => (tries++, pool.query('SELECT 1')), { withinMs: 300, delaysMs: [50] }));
    await pool.end();
    expect(isConnectionLoss(lost)).toBe(true);
    expect(tries).toBeGreaterThan(2);
    expect(Date.now() - started).toBeLessThan(1_000);

    const db = createPool(SERVER, 1);
    let wrongTries = 0;
    const wrong = await errorOf(() => retryOnConnectionLoss(() => (wrongTries++, db.query('SELEC 1')), { withinMs: 1_000 }));
    await db.end();
    expect([(wrong as { code?: string }).code, wrongTries]).toEqual(['42601', 1]);
  });
});
