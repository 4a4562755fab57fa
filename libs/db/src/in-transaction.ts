/**
 * BEGIN … COMMIT (or ROLLBACK) on one session checked out of a pg pool, for work that needs more than one
 * statement in a transaction (the outbox relay's claim, publish and delete; the sweeper's; event
 * retention's).
 *
 * pg-pool listens for 'error' on idle sessions only. A checked-out session whose connection is lost
 * (PostgreSQL restarted, the backend terminated) emits 'error' even while a query is running, and
 * with nobody listening that event ends the process. So the session is listened to while it is
 * out; a session that broke, or whose ROLLBACK failed, goes back to the pool to be discarded
 * rather than reused. The work's own error is what the caller sees.
 */
import type { Pool, PoolClient } from 'pg';

export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return inSession(pool, 'COMMIT', work);
}

/**
 * BEGIN … ROLLBACK: the work's writes are never kept, whatever it returns. For asking the
 * database's own rules (a trigger, a constraint) whether a write would be taken, so that the rule
 * is written once, in the database, and not again in the caller.
 */
export async function rolledBack<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return inSession(pool, 'ROLLBACK', work);
}

async function inSession<T>(pool: Pool, end: 'COMMIT' | 'ROLLBACK', work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query(end);
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => {
      broken ??= e;
    });
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
