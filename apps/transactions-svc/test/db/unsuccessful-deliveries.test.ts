/**
 * unsuccessful_deliveries (what recoverCallbacks reads) holds exactly the deliveries whose status is
 * failed or skipped, kept by triggers on callback_deliveries whatever writes them: callback-svc's
 * outcomes, a new series, the retention job's delete.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';

let db: TestDatabase;
let client: pg.Client;
let merchantId: string;

beforeAll(async () => {
  db = await createTestDatabase('unsuccessful');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  merchantId = randomUUID();
  await client.query("INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret) VALUES ($1, 'm', repeat('b', 64), 'whsec_x')", [merchantId]);
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

let n = 0;
async function event(type = 'withdraw.pending'): Promise<string> {
  const tx = randomUUID();
  const id = `evt_${randomUUID().replace(/-/g, '')}`;
  await client.query(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
     VALUES ($1, $2, $3::transaction_type, 'pending', 1, 'USD', $4, 1, now(), now())`,
    [tx, merchantId, type.split('.')[0], `o-${++n}`],
  );
  await client.query(
    `WITH e AS (INSERT INTO transaction_events (id, transaction_id, merchant_id, sequence, type, status, payload, created_at)
                VALUES ($1, $2, $3, 1, $4, 'pending', '{}', now() - interval '1 hour') RETURNING id)
     INSERT INTO callback_deliveries (event_id) SELECT id FROM e`,
    [id, tx, merchantId, type],
  );
  return id;
}

const filed = async (id: string) =>
  (await client.query(`SELECT merchant_id, kind::text, created_at FROM unsuccessful_deliveries WHERE event_id = $1`, [id])).rows[0];
const setStatus = (id: string, status: string) => client.query(`UPDATE callback_deliveries SET status = $2::delivery_status WHERE event_id = $1`, [id, status]);

describe('unsuccessful_deliveries', () => {
  it('files a delivery when it ends failed or skipped, with its event merchant, kind and time', async () => {
    const id = await event('withdraw.pending');
    expect(await filed(id)).toBeUndefined();
    await setStatus(id, 'retrying');
    expect(await filed(id)).toBeUndefined();
    await setStatus(id, 'failed');
    const row = await filed(id);
    expect(row).toMatchObject({ merchant_id: merchantId, kind: 'withdraw' });
    const { rows } = await client.query(`SELECT created_at FROM transaction_events WHERE id = $1`, [id]);
    expect(row.created_at).toEqual(rows[0].created_at);
    await setStatus(id, 'skipped'); // still unsuccessful: filed once
    expect((await client.query(`SELECT count(*)::int AS c FROM unsuccessful_deliveries WHERE event_id = $1`, [id])).rows[0].c).toBe(1);
  });

  it('lets it go when a new series starts, and files it again when that one fails', async () => {
    const id = await event('deposit.completed');
    await setStatus(id, 'skipped');
    expect(await filed(id)).toMatchObject({ kind: 'deposit' });
    await setStatus(id, 'pending');
    expect(await filed(id)).toBeUndefined();
    await setStatus(id, 'failed');
    expect(await filed(id)).toBeDefined();
    await setStatus(id, 'succeeded');
    expect(await filed(id)).toBeUndefined();
  });

  it('lets it go when the delivery is removed (retention), and follows an event whose time is rewritten', async () => {
    const id = await event();
    await setStatus(id, 'failed');
    await client.query(`UPDATE transaction_events SET created_at = now() - interval '3 days' WHERE id = $1`, [id]);
    expect(Date.now() - (await filed(id)).created_at.getTime()).toBeGreaterThan(2.9 * 86_400_000);
    await client.query(`DELETE FROM callback_deliveries WHERE event_id = $1`, [id]);
    expect(await filed(id)).toBeUndefined();
  });
});
