/**
 * GET /ui/viewTransaction with Accept: text/csv (docs/api.md#viewing-transactions): the reconciliation export as
 * RFC 4180 CSV, streamed from transactions-svc's export, formula-leading cells neutralised.
 */
import { EXPORT_ROWS, FORMULA, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const csv = (query = '', headers: Record<string, string> = {}) =>
  t.ui.inject({ method: 'GET', url: `/ui/viewTransaction${query}`, headers: { 'x-merchant-id': MERCHANT_ID, accept: 'text/csv', ...headers } });

const HEADER =
  'id,type,status,amount,currency,orderId,description,destination,metadata,createdAt,updatedAt,lastEventId,lastEventType,deliveryStatus,deliveryAttempts,acknowledgedAt';

describe('GET /ui/viewTransaction as CSV', () => {
  it('answers text/csv as an attachment, never cached', async () => {
    const res = await csv();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers['content-disposition']).toBe('attachment; filename="transactions.csv"');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('writes a header and one CRLF-terminated record per row, quoting and neutralising per RFC 4180', async () => {
    const { body } = await csv();
    const [deposit, withdraw, controls] = EXPORT_ROWS;
    expect(body).toBe(
      [
        HEADER,
        // orderId "=HYPERLINK(…)" gets a leading ' and, holding quotes and a comma, is quoted with the quotes doubled;
        // the description holds a comma, quotes and CRLF: quoted, kept verbatim inside.
        `${deposit!.transaction.id},deposit,completed,123456789012345678.12345678,USDT,"'=HYPERLINK(""http://evil.test"",""click"")","line one, ""two""\r\nline three",,"{""note"":""@SUM(A1)""}",2026-11-21T10:00:00.000Z,2026-11-21T10:00:05.000Z,evt_02,deposit.completed,succeeded,2,2026-11-21T10:00:07.000Z`,
        // + - and tab lead: neutralised; a delivery never acknowledged has an empty acknowledgedAt.
        `${withdraw!.transaction.id},withdraw,pending,0.10,USD,'+1 555,'-5 refund,'\tTAB,{},2026-11-21T09:00:00.000Z,2026-11-21T09:00:00.000Z,evt_03,withdraw.pending,failed,6,`,
        // A leading tab or CR is neutralised too (the CR also makes the cell quoted); no event yet: empty delivery cells.
        `${controls!.transaction.id},deposit,completed,123456789012345678.12345678,USDT,'\tcmd,"'\rcmd",,{},2026-11-21T10:00:00.000Z,2026-11-21T10:00:05.000Z,,,,0,`,
        '',
      ].join('\r\n'),
    );
    expect(body).not.toContain(`,${FORMULA}`);
  });

  it('passes the list filters to the export, leaves out limit, and passes the cursor for transactions-svc to check', async () => {
    const res = await csv('?type=withdraw&limit=5&cursor=abc');
    expect(res.body.split('\r\n')).toHaveLength(3); // header, one row, the final empty string
    const call = t.upstream.calls.filter((c) => c.url.startsWith('/api/transactions/export')).at(-1)!;
    expect(call.url).toBe('/api/transactions/export?type=withdraw&cursor=abc');
    expect(call.headers['x-merchant-id']).toBe(MERCHANT_ID);
  });

  it('passes a problem from transactions-svc through as problem+json with its status', async () => {
    const res = await csv('?type=refund', { accept: 'text/csv' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers one transaction (id) asked for as CSV with 400 problem+json naming id: CSV is for lists', async () => {
    const res = await csv(`?id=${EXPORT_ROWS[0]!.transaction.id}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      detail: 'CSV is for lists; drop id or ask for application/json.',
      errors: [{ path: 'querystring:/id', message: expect.stringContaining('CSV is for lists') }],
    });
    expect(res.json().requestId).toBe(res.headers['x-request-id']);
  });

  it('is chosen only when text/csv is asked for by name', async () => {
    const res = await csv('', { accept: 'text/*' });
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});
