/**
 * GET /api/transactions/export (behind /ui/viewTransaction with Accept: text/csv): every matching
 * transaction, streamed as NDJSON in keyset pages, with its latest event's delivery.
 */
import { countUpToLimit, EXPORT_ROW_MAX_BYTES, exportPageRows, ExportTooLargeError, exportRows as exportRowsOf } from '../../src/domain/transaction-export';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('export_tx');
});
afterAll(async () => svc?.close());

const exportRows = async (query = '', merchant = svc.merchantA) => {
  const res = await svc.as(merchant, { method: 'GET', url: `/api/transactions/export?${query}` });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  return res.body.split('\n').filter(Boolean).map((line) => JSON.parse(line));
};

async function listAll(query: string, merchant = svc.merchantA) {
  const items = [];
  let cursor: string | null = null;
  do {
    const page: any = (await svc.as(merchant, { method: 'GET', url: `/api/transactions?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}` })).json();
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** Many plain transactions (no events) straight in SQL, spread over the last hours. */
async function bulkInsert(merchantId: string, count: number, prefix: string) {
  await svc.db.$executeRawUnsafe(
    `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid, CASE WHEN i % 3 = 0 THEN 'withdraw' ELSE 'deposit' END::transaction_type,
            'completed', (i || '.50')::numeric, 'USD', $2 || i, 0,
            now() - make_interval(secs => i), now() - make_interval(secs => i)
       FROM generate_series(1, $3::int) i`,
    merchantId,
    prefix,
    count,
  );
}

describe('GET /api/transactions/export', () => {
  it('streams every matching transaction across keyset pages, newest first, exactly as the list', async () => {
    await bulkInsert(svc.merchantA, 2345, 'bulk-');
    const rows = await exportRows();
    expect(rows).toHaveLength(2345);
    expect(rows.map((r) => r.transaction)).toEqual(await listAll(''));
  });

  it('applies the list filters and ignores limit and a cursor this API issued', async () => {
    const page: any = (await svc.as(svc.merchantA, { method: 'GET', url: '/api/transactions?type=withdraw&limit=5' })).json();
    const rows = await exportRows(`type=withdraw&limit=5&cursor=${page.nextCursor}`);
    expect(rows.map((r) => r.transaction)).toEqual(await listAll('type=withdraw'));
    expect(rows.length).toBe(781);
  });

  it('refuses a cursor this API did not issue, as the list does, before holding a download', async () => {
    const res = await svc.as(svc.merchantA, { method: 'GET', url: '/api/transactions/export?cursor=whatever' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }] });
  });

  it("holds none of another merchant's transactions", async () => {
    expect(await exportRows('', svc.merchantB)).toEqual([]);
  });

  it('carries the latest event: its delivery status, the number of attempts and when a 200 acknowledged it (not a 200 whose body was cut short)', async () => {
    const tx = (await svc.as(svc.merchantB, { method: 'POST', url: '/api/createDeposit', payload: { amount: '100.50', currency: 'USD', orderId: 'ack-1' } })).json();
    const [pendingEvent] = await svc.db.$queryRaw<{ id: string }[]>`SELECT id FROM transaction_events WHERE transaction_id = ${tx.id}::uuid`;
    const fresh = (await exportRows('', svc.merchantB))[0];
    expect(fresh).toEqual({ transaction: tx, lastEventId: pendingEvent!.id, lastEventType: 'deposit.pending', deliveryStatus: 'pending', deliveryAttempts: 0, acknowledgedAt: null });

    const moved = await svc.app.inject({ method: 'POST', url: `/internal/transactions/${tx.id}/status`, headers: { 'x-admin-token': 'test-admin-token' }, payload: { status: 'completed' } });
    expect(moved.statusCode).toBe(200);
    const [latest] = await svc.db.$queryRaw<{ id: string }[]>`SELECT id FROM transaction_events WHERE transaction_id = ${tx.id}::uuid AND sequence = 2`;
    await svc.db.$executeRaw`
      INSERT INTO callback_attempts (event_id, attempt, at, status_code, error, duration_ms) VALUES
        (${latest!.id}, 1, '2026-11-22T10:00:00.000Z', 200, 'timeout: the reply body did not complete within 15000 ms', 15000),
        (${latest!.id}, 2, '2026-11-22T10:00:05.123Z', 200, NULL, 14507)`;
    await svc.db.$executeRaw`UPDATE callback_deliveries SET status = 'succeeded', attempt_count = 2 WHERE event_id = ${latest!.id}`;

    const row = (await exportRows('', svc.merchantB))[0];
    expect(row).toMatchObject({
      transaction: { id: tx.id, status: 'completed', amount: '100.50' },
      lastEventId: latest!.id,
      lastEventType: 'deposit.completed',
      deliveryStatus: 'succeeded',
      deliveryAttempts: 2,
      // When the whole 200 arrived: the attempt's start plus its 14,507 ms.
      acknowledgedAt: '2026-11-22T10:00:19.630Z',
    });
  });

  it('refuses more than 100,000 matching rows with a 400 that names the limit, before streaming', async () => {
    await bulkInsert(svc.merchantB, 100_001, 'huge-');
    const res = await svc.as(svc.merchantB, { method: 'GET', url: '/api/transactions/export' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', detail: expect.stringContaining('100000') });
    // Narrowed to the limit it streams.
    const narrowed = await svc.as(svc.merchantB, { method: 'GET', url: '/api/transactions/export?orderId=huge-7' });
    expect(narrowed.body.split('\n').filter(Boolean)).toHaveLength(1);
  }, 60_000);

  it('reads one point in time: rows committed after the count never push older ones out, and passing the cap fails loudly', async () => {
    const merchant = svc.merchantB;
    await bulkInsert(merchant, 1, 'as-of-');
    const counted = await countUpToLimit(svc.pool, merchant, { orderId: 'as-of-1' } as never);
    expect(counted.count).toBe(1);
    await svc.db.$executeRawUnsafe(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, last_sequence, created_at, updated_at)
       VALUES (gen_random_uuid(), $1::uuid, 'withdraw', 'completed', 1, 'USD', 'as-of-1', 0, now() + interval '1 second', now())`,
      merchant,
    );
    const rows = [];
    for await (const row of exportRowsOf(svc.pool, merchant, { orderId: 'as-of-1' } as never, { asOf: counted.asOf, pageBytes: 1_048_576 })) rows.push(row);
    expect(rows.map((r) => r.transaction.type)).toEqual(['deposit']); // not the withdraw committed after the count

    // More rows than the cap below asOf (a late commit with an earlier created_at): the stream throws
    // after the cap's rows, so the download ends unfinished instead of silently missing the rest.
    let streamed = 0;
    const drain = async () => {
      const query = { orderId: 'as-of-1' } as never; // both rows below this asOf
      for await (const _row of exportRowsOf(svc.pool, merchant, query, { asOf: new Date(Date.now() + 60_000).toISOString(), pageBytes: 1_048_576, maxRows: 1 })) streamed++;
    };
    await expect(drain()).rejects.toBeInstanceOf(ExportTooLargeError);
    expect(streamed).toBe(1);
  });

  it('sizes its pages in bytes: the largest rows the API admits, never a fixed 1,000', () => {
    expect(exportPageRows(1_048_576)).toBe(21);
    expect(exportPageRows(1_048_576) * EXPORT_ROW_MAX_BYTES).toBeLessThanOrEqual(1_048_576);
    expect(exportPageRows(1)).toBe(1);
  });

  it.each(['limit=0', 'type=refund', 'from=yesterday', 'bogus=1'])('answers 400 validation_failed for %s', async (query) => {
    const res = await svc.as(svc.merchantA, { method: 'GET', url: `/api/transactions/export?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
  });
});
