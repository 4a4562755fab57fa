/**
 * Bounded growth (issue 8 §4): events older than EVENT_RETENTION_DAYS go with their deliveries and
 * attempts, oldest first, through the created_at index, in batches replicas never share; the
 * transactions stay, and so does anything not yet published or still being delivered.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { createPool } from '@dw/db';
import { EXPIRED_EVENTS_SQL, removeExpiredEvents } from '../../src/retention/event-retention';
import { startRetentionJob } from '../../src/retention/retention-job';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';

const RETENTION_DAYS = 90;
const OLD = "now() - interval '400 days'";
const RECENT = "now() - interval '10 days'";

let database: TestDatabase;
let pool: pg.Pool;
let merchantId: string;
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  database = await createTestDatabase('retention');
  pool = createPool(database.url, 6);
  merchantId = randomUUID();
  await pool.query(
    `INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret) VALUES ($1, 'Retention', $2, 'whsec_dGVzdA==')`,
    [merchantId, randomUUID().replace(/-/g, '').padEnd(64, '0')],
  );
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

beforeEach(async () => {
  await pool.query('DELETE FROM callback_attempts; DELETE FROM callback_deliveries; DELETE FROM outbox; DELETE FROM transaction_events; DELETE FROM transactions');
});

/**
 * `n` transactions, each with one event created at `createdAt` (an SQL expression, spread over a
 * day so the order is not trivial), its delivery in `status` and `attempts` attempts. Returns the event ids.
 */
async function insertEvents(n: number, createdAt: string, status = 'succeeded', attempts = 2): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH t AS (
       INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'deposit', 'completed', 1, 'USD', 'order-' || gen_random_uuid(), 1, ${createdAt}, ${createdAt}
         FROM generate_series(1, $2)
       RETURNING id, created_at
     ), e AS (
       INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
       SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), t.id, $1, 1, 'deposit.completed', 'completed', '{}'::jsonb,
              t.created_at - random() * interval '1 day'
         FROM t
       RETURNING id
     ), d AS (
       INSERT INTO callback_deliveries (event_id, status, attempt_count) SELECT id, $3::delivery_status, $4 FROM e RETURNING event_id
     ), a AS (
       INSERT INTO callback_attempts (event_id, attempt, at, url, status_code, duration_ms)
       SELECT d.event_id, g, now(), 'https://merchant.example/cb', 200, 5 FROM d, generate_series(1, $4) g
     )
     SELECT id FROM e`,
    [merchantId, n, status, attempts],
  );
  return rows.map((r) => r.id);
}

async function counts() {
  const { rows } = await pool.query<{ tx: number; ev: number; dl: number; at: number }>(
    `SELECT (SELECT count(*) FROM transactions)::int AS tx, (SELECT count(*) FROM transaction_events)::int AS ev,
            (SELECT count(*) FROM callback_deliveries)::int AS dl, (SELECT count(*) FROM callback_attempts)::int AS at`,
  );
  return rows[0]!;
}

async function existing(eventIds: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM transaction_events WHERE id = ANY($1::text[])', [eventIds]);
  return rows.map((r) => r.id).sort();
}

type PlanNode = Record<string, string> & { Plans?: PlanNode[] };
const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

describe('event retention: what is removed', () => {
  it('removes events older than the retention with their deliveries and attempts, keeps recent ones and every transaction', async () => {
    const old = await insertEvents(50, OLD);
    const recent = await insertEvents(20, RECENT);
    const removed = await removeExpiredEvents(pool, RETENTION_DAYS, 500);
    expect(removed).toMatchObject({ events: 50, attempts: 100, seen: 50 });
    expect(await existing(old)).toEqual([]);
    expect(await existing(recent)).toEqual([...recent].sort());
    expect(await counts()).toEqual({ tx: 70, ev: 20, dl: 20, at: 40 });
  });

  it('removes the oldest first, one batch at a time', async () => {
    const old = await insertEvents(30, OLD);
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM transaction_events WHERE id = ANY($1::text[]) ORDER BY created_at', [old]);
    const batch = await removeExpiredEvents(pool, RETENTION_DAYS, 10);
    expect(batch).toMatchObject({ events: 10, seen: 10 });
    expect(await existing(old)).toEqual(rows.slice(10).map((r) => r.id).sort());
  });

  it('keeps an expired event whose outbox row is not yet published, and one whose delivery is under way', async () => {
    const [unpublished] = await insertEvents(1, OLD, 'pending', 0);
    await pool.query(`INSERT INTO outbox (event_id, routing_key, payload) VALUES ($1, 'deposit.completed', '{}')`, [unpublished]);
    const [retrying] = await insertEvents(1, OLD, 'retrying', 1);
    const [failed] = await insertEvents(1, OLD, 'failed', 6);
    const [skipped] = await insertEvents(1, OLD, 'skipped', 0);
    const removed = await removeExpiredEvents(pool, RETENTION_DAYS, 500);
    expect(removed.events).toBe(2);
    expect(await existing([unpublished!, retrying!, failed!, skipped!])).toEqual([unpublished!, retrying!].sort());
  });

  it('finds each batch through the created_at index, not by scanning the history', async () => {
    await insertEvents(3000, OLD);
    await insertEvents(3000, RECENT);
    await pool.query('ANALYZE transaction_events; ANALYZE callback_deliveries; ANALYZE outbox');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${EXPIRED_EVENTS_SQL}`, [RETENTION_DAYS, 500, ['pending', 'retrying']]);
      const nodes = planNodes(rows[0]['QUERY PLAN'][0].Plan);
      const onEvents = nodes.filter((n) => n['Relation Name'] === 'transaction_events');
      expect(onEvents.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', 'transaction_events_created_at_idx']]);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

describe('event retention: replicas', () => {
  it('does not wait for, or touch, the events another replica holds', async () => {
    const old = await insertEvents(20, OLD);
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM transaction_events ORDER BY created_at LIMIT 5');
    const held = rows.map((r) => r.id);
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM transaction_events WHERE id = ANY($1::text[]) FOR UPDATE', [held]);
      const started = Date.now();
      const removed = await removeExpiredEvents(pool, RETENTION_DAYS, 500);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(removed.events).toBe(15);
      expect(await existing(old)).toEqual([...held].sort());
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
  });

  it('two jobs sweeping at once remove every expired event exactly once, without errors', async () => {
    await insertEvents(3000, OLD);
    const recent = await insertEvents(100, RECENT);
    const warnings: unknown[] = [];
    const logger = { info: () => undefined, warn: (obj: object) => warnings.push(obj) };
    const secondPool = createPool(database.url, 3);
    const a = startRetentionJob(pool, logger, { retentionDays: RETENTION_DAYS, batchSize: 100, pauseMs: 0, intervalMs: 3_600_000 });
    const b = startRetentionJob(secondPool, logger, { retentionDays: RETENTION_DAYS, batchSize: 100, pauseMs: 0, intervalMs: 3_600_000 });
    try {
      const [byA, byB] = await Promise.all([a.sweep(), b.sweep()]);
      expect(warnings).toEqual([]);
      expect(byA + byB).toBe(3000);
      expect(Math.min(byA, byB)).toBeGreaterThan(0); // both did part of the work
      expect(await counts()).toEqual({ tx: 3100, ev: 100, dl: 100, at: 200 });
      expect(await existing(recent)).toEqual([...recent].sort());
    } finally {
      await a.stop();
      await b.stop();
      await secondPool.end();
    }
  }, 60_000);

  it('with EVENT_RETENTION_DAYS=0 keeps every event, however old', async () => {
    await insertEvents(5, OLD);
    const job = startRetentionJob(pool, silent, { retentionDays: 0, intervalMs: 3_600_000 });
    try {
      expect(await job.sweep()).toBe(0);
      expect((await counts()).ev).toBe(5);
    } finally {
      await job.stop();
    }
  });
});
