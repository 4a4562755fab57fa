/** Who may ask (x-merchant-id from the gateway) and what may be asked (ViewTransactionQuery). */
import { MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();

describe('GET /ui/viewTransaction needs the merchant the gateway authenticated', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a uuid', 'merchant-1'],
    ['a uuid with junk after it', `${MERCHANT_ID}x`],
  ])('answers 401 problem+json when x-merchant-id is %s, without asking transactions-svc', async (_name, value) => {
    t.upstream.calls.length = 0;
    const headers: Record<string, string> = { 'x-request-id': 'req-401' };
    if (value !== undefined) headers['x-merchant-id'] = value;
    const res = await t.ui.inject({ method: 'GET', url: '/ui/viewTransaction', headers });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 401, code: 'unauthorized', requestId: 'req-401' });
    expect(t.upstream.calls).toHaveLength(0);
  });
});

describe('GET /ui/viewTransaction validates its query', () => {
  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['id=not-a-uuid', 'id'],
    ['type=refund', 'type'],
    ['status=done', 'status'],
    ['from=yesterday', 'from'],
    ['cursor=', 'cursor'],
    ['colour=red', 'colour'],
  ])('answers 400 problem+json naming the field for %s', async (query, field) => {
    t.upstream.calls.length = 0;
    const res = await t.ui.inject({
      method: 'GET',
      url: `/ui/viewTransaction?${query}`,
      headers: { 'x-merchant-id': MERCHANT_ID },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: `querystring:/${field}` })]));
    expect(t.upstream.calls).toHaveLength(0);
  });

  const ID = '7b0c0000-0000-4000-8000-000000000000';
  it.each([
    [`id=${ID}&type=withdraw`, ['type']],
    [`limit=5&id=${ID}&status=failed`, ['limit', 'status']],
    [`id=${ID}&cursor=abc`, ['cursor']],
  ])('answers 400 naming each list parameter given beside id (%s), asking nothing of transactions-svc', async (query, fields) => {
    t.upstream.calls.length = 0;
    const res = await t.ui.inject({ method: 'GET', url: `/ui/viewTransaction?${query}`, headers: { 'x-merchant-id': MERCHANT_ID, accept: 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json().errors).toEqual(fields.map((f) => ({ path: `querystring:/${f}`, message: 'must be absent with id (id asks for one transaction)' })));
    // A browser gets the same problem+json: every error is one, whatever the Accept.
    const page = await t.ui.inject({ method: 'GET', url: `/ui/viewTransaction?${query}`, headers: { 'x-merchant-id': MERCHANT_ID, accept: 'text/html' } });
    expect(page.statusCode).toBe(400);
    expect(page.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(page.json().errors).toEqual(res.json().errors);
    expect(t.upstream.calls).toHaveLength(0);
  });

  it.each(['1', '100'])('accepts limit=%s', async (limit) => {
    const res = await t.ui.inject({
      method: 'GET',
      url: `/ui/viewTransaction?limit=${limit}`,
      headers: { 'x-merchant-id': MERCHANT_ID },
    });
    expect(res.statusCode).toBe(200);
    expect(new URL(t.upstream.calls.at(-1)!.url, 'http://x').searchParams.get('limit')).toBe(limit);
  });
});
