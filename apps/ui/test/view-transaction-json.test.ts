/** GET /ui/viewTransaction with Accept: application/json (the default): the contract's JSON forms. */
import { AS_WRITTEN } from './support/fake-transactions-svc';
import { DETAIL, MERCHANT_ID, OTHER_MERCHANT_ID, PAGE_ONE, PAGE_TWO } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();

const view = (query: string, headers: Record<string, string> = {}) =>
  t.ui.inject({ method: 'GET', url: `/ui/viewTransaction${query}`, headers: { 'x-merchant-id': MERCHANT_ID, ...headers } });

describe('GET /ui/viewTransaction as JSON', () => {
  it.each([
    ['no Accept header', {}],
    ['Accept: application/json', { accept: 'application/json' }],
    ['Accept: */*', { accept: '*/*' }],
  ])('answers the list as {items, nextCursor} exactly as transactions-svc gave it (%s)', async (_name, headers) => {
    const res = await view('', headers);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual(PAGE_ONE);
    // The amount is the exact decimal string, digit for digit.
    expect(res.body).toContain('"amount":"123456789012345678.12345678"');
  });

  it("passes transactions-svc's JSON on byte for byte: never parsed and written again (a page may be 4.25 MB)", async () => {
    const res = await view('?orderId=as-written', { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(AS_WRITTEN);
  });

  it('forwards the merchant, the request id and the validated filters with the default limit', async () => {
    t.upstream.calls.length = 0;
    const res = await view('?type=deposit&status=completed&orderId=a%20b&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z', {
      'x-request-id': 'req-filters-1',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-filters-1');
    const call = t.upstream.calls.at(-1)!;
    const url = new URL(call.url, 'http://x');
    expect(url.pathname).toBe('/api/transactions');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      type: 'deposit',
      status: 'completed',
      orderId: 'a b',
      from: '2026-11-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
      limit: '20',
    });
    expect(call.headers['x-merchant-id']).toBe(MERCHANT_ID);
    expect(call.headers['x-request-id']).toBe('req-filters-1');
  });

  it('pages on with the cursor from the previous page', async () => {
    const res = await view(`?limit=2&cursor=${PAGE_ONE.nextCursor}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(PAGE_TWO);
    const url = new URL(t.upstream.calls.at(-1)!.url, 'http://x');
    expect(url.searchParams.get('cursor')).toBe(PAGE_ONE.nextCursor);
    expect(url.searchParams.get('limit')).toBe('2');
  });

  it('answers one transaction as {transaction, events} with every attempt, and the trace id', async () => {
    const res = await view(`?id=${DETAIL.transaction.id}`, { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(DETAIL);
    expect(new URL(t.upstream.calls.at(-1)!.url, 'http://x').pathname).toBe(`/api/transactions/${DETAIL.transaction.id}`);
  });

  it('marks answers as private and varying by Accept', async () => {
    const res = await view('');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.vary).toMatch(/accept/i);
  });
});

describe('errors from transactions-svc pass through', () => {
  it('passes a 404 through with its problem body', async () => {
    const res = await view('?id=11111111-2222-4333-8444-555555555555', { 'x-request-id': 'req-404' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 404, code: 'not_found', requestId: 'req-404' });
  });

  it('passes a 400 for a cursor it did not issue through with its errors', async () => {
    const res = await view('?cursor=bad');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }],
    });
  });

  it("scopes the read to the merchant in x-merchant-id (transactions-svc refuses another merchant's id)", async () => {
    const res = await view('', { 'x-merchant-id': OTHER_MERCHANT_ID });
    expect(t.upstream.calls.at(-1)!.headers['x-merchant-id']).toBe(OTHER_MERCHANT_ID);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'unauthorized' });
  });
});
