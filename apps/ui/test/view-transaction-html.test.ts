/** GET /ui/viewTransaction with Accept: text/html: server-rendered pages, every value escaped. */
import { CONTENT_SECURITY_POLICY } from '../src/security-headers';
import { DEPOSIT, DETAIL, HOSTILE, HOSTILE_ESCAPED, MERCHANT_ID, PAGE_ONE, WITHDRAW } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const t = useUiWithUpstream();

const page = (query: string, headers: Record<string, string> = {}) =>
  t.ui.inject({
    method: 'GET',
    url: `/ui/viewTransaction${query}`,
    headers: { 'x-merchant-id': MERCHANT_ID, accept: 'text/html', ...headers },
  });

/** Nothing a page renders may run script or carry inline style. */
function expectNoActiveContent(body: string): void {
  expect(body).not.toContain(HOSTILE);
  expect(body).not.toMatch(/<script/i);
  expect(body).not.toMatch(/<style|\sstyle=/i);
  expect(body).not.toMatch(/<img/i);
  expect(body).not.toMatch(/<[^>]*\son\w+=/i); // an event-handler attribute inside a real tag
}

describe('GET /ui/viewTransaction as HTML: the list', () => {
  it('renders a table of the page with each value escaped and the amount exact', async () => {
    const res = await page('');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain(HOSTILE_ESCAPED);
    // Digits grouped on the string itself: all 26 survive, none rounded through a float.
    expect(res.body).toContain('123,456,789,012,345,678.12345678');
    expect(res.body).toContain(WITHDRAW.orderId);
    expect(res.body).toContain('<table');
    expectNoActiveContent(res.body);
  });

  it('sends the strict Content-Security-Policy', async () => {
    const res = await page('');
    expect(CONTENT_SECURITY_POLICY).toBe(EXPECTED_CSP);
    expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it("links each transaction's page and the next page with the cursor and the same filters", async () => {
    const res = await page('?type=deposit&limit=2');
    expect(res.body).toContain(`href="/ui/viewTransaction?id=${DEPOSIT.id}"`);
    expect(res.body).toContain(`href="/ui/viewTransaction?id=${WITHDRAW.id}"`);
    expect(res.body).toContain(`href="/ui/viewTransaction?type=deposit&amp;limit=2&amp;cursor=${PAGE_ONE.nextCursor}"`);
  });

  it('is chosen by the Accept header a browser sends', async () => {
    const res = await page('', { accept: BROWSER_ACCEPT });
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('says so when a page is empty and offers no next link', async () => {
    const res = await page(`?cursor=${PAGE_ONE.nextCursor}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('No transactions match');
    expect(res.body).not.toContain('rel="next"');
  });
});

describe('GET /ui/viewTransaction as HTML: one transaction', () => {
  it('renders every field, the metadata escaped, and the event timeline with each attempt', async () => {
    const res = await page(`?id=${DETAIL.transaction.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP);
    const body = res.body;
    expect(body).toContain(HOSTILE_ESCAPED);
    expect(body).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(body).toContain('first &quot;deposit&quot; &amp; more');
    expect(body).toContain('123,456,789,012,345,678.12345678'); // DEPOSIT.amount, digits grouped, none rounded
    expect(body).toContain(DEPOSIT.currency);
    expect(body).toContain(DETAIL.traceId!);
    for (const e of DETAIL.events) {
      expect(body).toContain(e.type);
      expect(body).toContain(`badge-${e.delivery.status}`);
    }
    expect(body).toContain('HTTP 500');
    expect(body).toContain('connect ECONNREFUSED');
    expect(body).toContain('HTTP 200');
    expect(body).toMatch(/42 ms[\s\S]*3 ms[\s\S]*17 ms/);
    expectNoActiveContent(body);
  });

  it('passes a 404 from transactions-svc on as problem+json, though the request asked for HTML (every error is problem+json)', async () => {
    const res = await page('?id=11111111-2222-4333-8444-555555555555', { 'x-request-id': 'req-html-404' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 404, code: 'not_found', detail: 'No transaction with this id.', requestId: 'req-html-404' });
  });

  it('answers its own 400 and 401 to an HTML request as problem+json too', async () => {
    const bad = await page('?limit=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(bad.json().errors).toEqual([expect.objectContaining({ path: 'querystring:/limit' })]);
    const anonymous = await t.ui.inject({ method: 'GET', url: '/ui/viewTransaction', headers: { accept: 'text/html' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });
});
