import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('view');
});
afterAll(async () => svc?.close());

let n = 0;
async function create(merchant: string, type: 'deposit' | 'withdraw' = 'deposit', orderId = `v-${++n}`) {
  const url = type === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw';
  const payload: Record<string, string> = { amount: `${n}.25`, currency: 'USD', orderId };
  if (type === 'withdraw') payload.destination = 'acct';
  return (await svc.as(merchant, { method: 'POST', url, payload })).json();
}
const list = (query: string, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'GET', url: `/api/transactions?${query}` });

describe('GET /api/transactions (the list behind /ui/viewTransaction)', () => {
  it('lists only the merchant’s own transactions, newest first, with the default limit of 20', async () => {
    for (let i = 0; i < 22; i++) await create(svc.merchantA);
    await create(svc.merchantB);
    const res = await list('');
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.items).toHaveLength(20);
    expect(page.nextCursor).toEqual(expect.any(String));
    const times = page.items.map((t: { createdAt: string }) => t.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('pages with the cursor without skipping or repeating a row while new rows arrive', async () => {
    const all = (await list('limit=100')).json().items.map((t: { id: string }) => t.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = (await list(`limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json();
      seen.push(...res.items.map((t: { id: string }) => t.id));
      cursor = res.nextCursor;
      await create(svc.merchantA); // arrives between pages
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('carries each row exactly as its create answered it, text of every kind and amounts digit for digit', async () => {
    // The page is PostgreSQL's JSON of each row, sent on as text: its escaping must agree with JSON.stringify's.
    const text = 'quote " backslash \\ slash / é 😀 \u2028 \u{10FFFF} </script> \u0080';
    const payload = { amount: '123456789012345678.10000000', currency: 'USDT', orderId: `exact-" \\ é 😀 \u2028`, description: text, metadata: { 'k"\\é😀': text, b: '', a: '0' } };
    const created = await svc.as(svc.merchantA, { method: 'POST', url: '/api/createDeposit', payload });
    expect({ status: created.statusCode, body: created.statusCode === 201 ? undefined : created.json() }).toEqual({ status: 201, body: undefined });
    const res = await list(`orderId=${encodeURIComponent(payload.orderId)}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ items: [created.json()], nextCursor: null });
    expect(res.json().items[0].amount).toBe('123456789012345678.10000000');
  });

  it('sends a page longer than one slice of the body whole, its rows as their creates answered them', async () => {
    const merchant = svc.merchantB;
    const large = (i: number) => ({
      amount: '1.00',
      currency: 'EUR',
      orderId: `slices-${i}`,
      description: 'é'.repeat(500),
      metadata: Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`key-${k}`, `${i}-😀`.repeat(100)])),
    });
    const created = [];
    for (let i = 0; i < 20; i++) created.push((await svc.as(merchant, { method: 'POST', url: '/api/createDeposit', payload: large(i) })).json());
    const res = await list('limit=20', merchant);
    expect(res.statusCode).toBe(200);
    expect(res.body.length).toBeGreaterThan(2 * 64 * 1024); // three slices at least
    const page = res.json();
    expect(page.items).toEqual(created.reverse());
  });

  it('filters by type, status, orderId and a [from, to) range on createdAt', async () => {
    const w = await create(svc.merchantA, 'withdraw', 'filter-me');
    expect((await list('type=withdraw')).json().items.every((t: { type: string }) => t.type === 'withdraw')).toBe(true);
    expect((await list('orderId=filter-me')).json().items.map((t: { id: string }) => t.id)).toEqual([w.id]);
    expect((await list('status=completed')).json().items).toEqual([]);
    const at = encodeURIComponent(w.createdAt);
    const from = (await list(`from=${at}&orderId=filter-me`)).json().items;
    const to = (await list(`to=${at}&orderId=filter-me`)).json().items;
    expect(from.map((t: { id: string }) => t.id)).toEqual([w.id]);
    expect(to).toEqual([]);
  });

  it('finds an orderId under either type when no type is given, and only that type when one is', async () => {
    const d = await create(svc.merchantA, 'deposit', 'both-types');
    const w = await create(svc.merchantA, 'withdraw', 'both-types');
    const ids = async (query: string) => (await list(query)).json().items.map((t: { id: string }) => t.id);
    expect(await ids('orderId=both-types')).toEqual([w.id, d.id]);
    expect(await ids('orderId=both-types&type=deposit')).toEqual([d.id]);
    expect(await ids('orderId=both-types&type=withdraw&status=pending')).toEqual([w.id]);
    expect(await ids('orderId=both-types&status=completed')).toEqual([]);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'type=refund', 'status=done', 'from=yesterday', 'cursor=garbage', 'bogus=1'])(
    'answers 400 validation_failed for %s',
    async (query) => {
      const res = await list(query);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: expect.any(Array) });
    },
  );
});

describe('a [from, to) window nothing can fall in', () => {
  it.each([
    ['the list', '/api/transactions'],
    ['the export', '/api/transactions/export'],
    ['the statement', '/api/getBalanceHistory'],
  ])('is refused on %s with 400 naming to, when to is not later than from (offsets compared as instants)', async (_name, url) => {
    for (const window of ['from=2027-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from=2026-01-01T01:00:00%2B01:00&to=2026-01-01T00:00:00Z']) {
      const res = await svc.as(svc.merchantA, { method: 'GET', url: `${url}?${window}` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'querystring:/to', message: 'must be later than from' }] });
    }
    const later = await svc.as(svc.merchantA, { method: 'GET', url: `${url}?from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00.001Z` });
    expect(later.statusCode).toBe(200);
  });
});

describe('GET /api/transactions/{id}', () => {
  it('answers the transaction with its events in sequence order and their deliveries', async () => {
    const tx = await create(svc.merchantA);
    const res = await svc.as(svc.merchantA, { method: 'GET', url: `/api/transactions/${tx.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      transaction: tx,
      events: [
        {
          id: expect.stringMatching(/^evt_/),
          type: 'deposit.pending',
          createdAt: tx.createdAt,
          delivery: { status: 'pending', attempts: [] },
        },
      ],
      ledgerEntries: [expect.objectContaining({ kind: 'deposit.pending', transactionId: tx.id, change: { available: '0', held: '0', incoming: tx.amount } })],
      traceId: null,
    });
  });

  it('answers 404 for another merchant’s transaction, exactly like an unknown id', async () => {
    const tx = await create(svc.merchantA);
    const other = await svc.as(svc.merchantB, { method: 'GET', url: `/api/transactions/${tx.id}` });
    const unknown = await svc.as(svc.merchantB, {
      method: 'GET',
      url: '/api/transactions/00000000-0000-4000-8000-000000000000',
    });
    expect(other.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(other.json())).toEqual(strip(unknown.json()));
  });
});
