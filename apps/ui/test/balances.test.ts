/**
 * Balances and the statement as the viewer shows them (issue 18): GET /ui/balances and
 * GET /ui/statement read transactions-svc's getBalance and getBalanceHistory for the merchant and
 * render them; a transaction's ledger entries in its detail; every amount an exact decimal string
 * with its digits grouped, never through a float.
 */
import { balancesFragment } from '../src/html/balances-page';
import { detailFragment } from '../src/html/detail-page';
import { change, commonScale, groupDigits } from '../src/html/format';
import { readTrail } from '../src/html/pager';
import { BALANCES, DETAIL, HISTORY_ONE, HOSTILE, HOSTILE_ESCAPED, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const get = (url: string, headers: Record<string, string> = {}) =>
  t.ui.inject({ method: 'GET', url, headers: { 'x-merchant-id': MERCHANT_ID, ...headers } });

describe('amounts: digits grouped on the decimal string, every fraction digit kept', () => {
  it.each([
    ['0', '0'],
    ['999', '999'],
    ['1000', '1,000'],
    ['1234567.891', '1,234,567.891'],
    ['999999999999999999.99999999', '999,999,999,999,999,999.99999999'],
    ['0.00012345', '0.00012345'],
    ['-1000.50', '-1,000.50'],
    ['+12345', '+12,345'],
    ['100.1000000', '100.1000000'],
  ])('%s → %s', (raw, shown) => expect(groupDigits(raw)).toBe(shown));

  it('shows anything that is not a plain decimal as given', () => {
    expect(groupDigits('1e21')).toBe('1e21');
    expect(groupDigits('')).toBe('');
  });

  it("writes a balance's parts to one count of fraction digits by padding zeros, values unchanged", () => {
    expect(commonScale(['307.50', '0', '0.00', '0'])).toEqual(['307.50', '0.00', '0.00', '0.00']);
    expect(commonScale(['1000', '0', '5', '0'])).toEqual(['1000', '0', '5', '0']);
    expect(commonScale(['-12.5', '0.00012345'])).toEqual(['-12.50000000', '0.00012345']);
    expect(commonScale(['1e21', '1.5'])).toEqual(['1e21', '1.5']);
  });

  it('signs a change, and mutes a part that did not move', () => {
    expect(change('1000.5').value).toContain('>+1,000.5<');
    expect(change('-20').value).toContain('>-20<');
    expect(change('0').value).toBe('<span class="muted">0</span>');
    expect(change('0.000').value).toBe('<span class="muted">0</span>');
  });
});

describe('GET /ui/balances', () => {
  it('renders one card per currency, each part exact and grouped, linking its statement', async () => {
    const res = await get('/ui/balances', { accept: 'text/html', 'x-ui-fragment': '1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatch(/^<div data-fragment="balances">/);
    expect(res.body).toContain('<p class="available" data-field="available"><span class="amount">1,233,567.00000000</span> <span class="currency">USD</span></p>');
    expect(res.body).toContain('<dd data-field="held"><span class="amount">1,000.50000000</span> <span class="currency">USD</span></dd>');
    expect(res.body).toContain('<dd data-field="held"><span class="amount">0.00000000</span> <span class="currency">BTC</span></dd>');
    expect(res.body).toContain('<dd data-field="creditLimit"><span class="amount">999,999,999,999,999,999.99999999</span>');
    expect(res.body).toContain('<dd data-field="incoming"><span class="amount">0.00012345</span> <span class="currency">BTC</span></dd>');
    // Told apart by screen readers: "Statement of USD", not one more "Statement".
    expect(res.body).toContain('<a href="/ui/statement?currency=USD" data-statement="USD">Statement<span class="visually-hidden"> of USD</span></a>');
    expect(t.upstream.calls.at(-1)!.url).toBe('/api/getBalance');
  });

  it('renders a page without the fragment header, and the upstream JSON for a JSON client', async () => {
    expect((await get('/ui/balances', { accept: 'text/html' })).body).toMatch(/^<!doctype html>[^]*<h1>Balances<\/h1>/);
    const json = await get('/ui/balances', { accept: 'application/json' });
    expect(json.json()).toEqual(BALANCES);
  });

  it('says what can be withdrawn now, exactly (available + credit limit, at least 0), and why nothing can when available is below −credit limit', () => {
    const body = balancesFragment({
      balances: [
        { currency: 'EUR', available: '-55.5', held: '0', incoming: '0', creditLimit: '20.25' },
        { currency: 'USD', available: '1233567.000', held: '1000.50', incoming: '0', creditLimit: '999999999999999999.99999999' },
        { currency: 'GBP', available: '-5', held: '0', incoming: '0', creditLimit: '10' },
      ],
    }).value;
    expect(body).toContain('<dd data-field="withdrawable"><span class="amount">0.00</span> <span class="currency">EUR</span></dd>');
    expect(body).toContain('<p class="available negative" data-field="available"><span class="amount">-55.50</span>');
    expect(body).toMatch(/<article class="balance" data-currency="EUR">[^]*Withdraws in EUR are refused[^]*<\/article>/);
    expect(body).toContain('<dd data-field="withdrawable"><span class="amount">1,000,000,000,001,233,566.99999999</span> <span class="currency">USD</span></dd>');
    // Below zero but within the credit limit: withdraws still fit, so no warning.
    expect(body).toContain('<dd data-field="withdrawable"><span class="amount">5</span> <span class="currency">GBP</span></dd>');
    expect(body.match(/are refused/g)).toHaveLength(1);
  });

  it('says so when there is no balance yet', () => {
    expect(balancesFragment({ balances: [] }).value).toContain('No balances yet.');
  });
});

describe('GET /ui/statement', () => {
  it('renders the entries, each part’s change and the balance after it, the hostile reason as text', async () => {
    const res = await get('/ui/statement?currency=USD&limit=2', { accept: 'text/html', 'x-ui-fragment': '1' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/^<div data-fragment="statement" data-next-cursor="history-page-2">/);
    expect(t.upstream.calls.at(-1)!.url).toBe('/api/getBalanceHistory?currency=USD&limit=2');
    expect(res.body).toContain('<span data-field="kind">adjustment</span>');
    expect(res.body).toContain('<td data-label="Available" class="num" data-part="available"><span data-field="change"><span class="amount debit">-1,000.50</span></span>\n<span class="after muted" data-field="after">1,233,567.391</span></td>');
    expect(res.body).toContain('<span class="amount credit">+1,000.50</span>');
    // The balance after the hold, its three parts to one count of fraction digits: 1000.50 and 0 read as 1,000.500 and 0.000.
    expect(res.body).toContain('<td data-label="Held" class="num" data-part="held"><span data-field="change"><span class="amount credit">+1,000.50</span></span>\n<span class="after muted" data-field="after">1,000.500</span></td>');
    expect(res.body).toContain('<td data-label="Incoming" class="num" data-part="incoming"><span data-field="change"><span class="muted">0</span></span>\n<span class="after muted" data-field="after">0.000</span></td>');
    expect(res.body).toContain(HOSTILE_ESCAPED);
    expect(res.body).not.toContain(HOSTILE);
    expect(res.body).toMatch(
      new RegExp(`<a href="/ui/viewTransaction\\?id=${DETAIL.transaction.id}" data-tx="${DETAIL.transaction.id}">Transaction<span class="visually-hidden"> of the withdraw\\.hold entry of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC</span></a>`),
    );
    // The pager carries the next cursor and, in its trail, the first page's place.
    expect(res.body).toContain('hx-get="/ui/statement?currency=USD&amp;limit=2&amp;cursor=history-page-2" hx-target="#statement-table"');
  });

  it('refuses a query the API would refuse, as validation_failed naming the field', async () => {
    const res = await get('/ui/statement?currency=usd', { accept: 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toContain('currency');
  });

  it('answers 400 to Accept: text/csv: the statement’s CSV is GET /api/getBalanceHistory', async () => {
    const res = await get('/ui/statement', { accept: 'text/csv' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('/api/getBalanceHistory');
  });

  it('renders the no-script page with a link to the next page', async () => {
    const res = await get('/ui/statement', { accept: 'text/html' });
    expect(res.body).toContain('<a rel="next" href="/ui/statement?limit=20&amp;cursor=history-page-2">Next page</a>');
  });
});

describe("a transaction's ledger entries in its detail", () => {
  it('lists them in order when transactions-svc sends them, and says so when there are none', () => {
    const out = detailFragment({ ...DETAIL, ledgerEntries: [...HISTORY_ONE.items].reverse() }).value;
    expect(out).toContain('<h2>Ledger entries</h2>');
    const kinds = [...out.matchAll(/<span data-field="kind">([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(kinds).toEqual(['withdraw.hold', 'adjustment']);
    expect(out).not.toContain('data-tx='); // the detail does not link to itself
    expect(detailFragment({ ...DETAIL, ledgerEntries: [] }).value).toContain('No ledger entries.');
  });
});

describe('the pager trail (x-ui-trail)', () => {
  it('reads the page number and the earlier cursors; anything malformed is the first page', () => {
    expect(readTrail('3 . abc_-1')).toEqual({ page: 3, back: ['.', 'abc_-1'] });
    expect(readTrail(undefined)).toEqual({ page: 1, back: [] });
    expect(readTrail('2 <script>')).toEqual({ page: 1, back: [] });
    expect(readTrail('x .')).toEqual({ page: 1, back: [] });
    expect(readTrail(`60 ${Array(51).fill('.').join(' ')}`)).toEqual({ page: 1, back: [] });
  });
});
