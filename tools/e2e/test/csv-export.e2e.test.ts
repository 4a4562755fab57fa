/**
 * The reconciliation export (docs/api.md#viewing-transactions, Accept: text/csv) through the gateway and the real
 * processes: every matching transaction (not one page), RFC 4180, formula-leading cells
 * neutralised, and for the latest event its delivery status, attempts and the acknowledging 200.
 * It must match the JSON list, row for row.
 */
import { parse } from 'csv-parse/sync';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { ADMIN_TOKEN, api, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let receiver: CallbackReceiver;
let merchant: Merchant;
let other: Merchant;

const FORMULA_ORDER = '=HYPERLINK("http://evil.test","x")';
// Free text cannot hold a line break (the printable rule), but a comma, quotes and U+2028 still
// need RFC 4180 quoting.
const TRICKY_DESCRIPTION = 'line one, "quoted"\u2028line two';

const operator = async (id: string, status: string) => {
  const res = await fetch(`${stack.transactions}/internal/transactions/${id}/status`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  expect(res.status).toBe(200);
};

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  stack = await startStack('csv_export', { RATE_LIMIT_PER_SECOND: '1000', CALLBACK_RETRY_DELAYS_MS: '300,300,300,300,300' });
  merchant = stack.createMerchant('Exporting merchant');
  other = stack.createMerchant('Someone else');
  const call = api(stack, merchant.apiToken);
  await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/deposit` });
  // Withdraw callbacks fail for good: their delivery ends failed after 6 attempts, never acknowledged.
  await call('PUT', '/api/updateCallbackUrlWithdraw', { url: `${receiver.url}/withdraw` });
  receiver.respond = (r) => (r.path === '/withdraw' ? 503 : 200);

  for (let i = 0; i < 25; i++) {
    const res = await call('POST', '/api/createDeposit', { amount: `${i + 1}.10`, currency: 'USD', orderId: `dep-${i}` });
    if (i % 2 === 0) await operator(res.json.id, 'completed');
  }
  await call('POST', '/api/createDeposit', { amount: '999999999999999999.99999999', currency: 'USDT', orderId: FORMULA_ORDER, description: TRICKY_DESCRIPTION, metadata: { note: '+SUM(A1)' } });
  const w = await call('POST', '/api/createWithdraw', { amount: '5', currency: 'EUR', orderId: '-withdraw-1', destination: '@acct' });
  await operator(w.json.id, 'failed');
  await api(stack, other.apiToken)('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: 'not-yours' });
  // Let every delivery settle (the withdraw's 6 attempts take about 1.5 s).
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const detail = (await call('GET', `/ui/viewTransaction?id=${w.json.id}`, undefined, { accept: 'application/json' })).json;
    if (detail.events.every((e: any) => e.delivery.status === 'failed')) break;
    await new Promise((r) => setTimeout(r, 250));
  }
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function exportCsv(query = '', token = merchant.apiToken) {
  const res = await api(stack, token)('GET', `/ui/viewTransaction${query}`, undefined, { accept: 'text/csv' });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
  return { text: res.text, rows: parse(res.text, { columns: true }) as Record<string, string>[] };
}

async function jsonList(query = '') {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '';
    const page: any = (
      await api(stack, merchant.apiToken)('GET', `/ui/viewTransaction?limit=10${sep}${query}${cursor ? `&cursor=${cursor}` : ''}`, undefined, { accept: 'application/json' })
    ).json;
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** A cell as the merchant stored it: the export's leading ' undone where it neutralised a formula. */
const unneutralised = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);

describe('GET /ui/viewTransaction with Accept: text/csv', () => {
  it('holds every transaction of the list (all pages), in the same order, with the same values', async () => {
    const { rows } = await exportCsv('?limit=5');
    const list = await jsonList();
    expect(list.length).toBe(27);
    expect(rows.map((r) => r.id)).toEqual(list.map((t) => t.id));
    for (const [i, tx] of list.entries()) {
      const row = rows[i]!;
      expect(row).toMatchObject({ type: tx.type, status: tx.status, amount: tx.amount, currency: tx.currency, createdAt: tx.createdAt, updatedAt: tx.updatedAt });
      expect(unneutralised(row.orderId!)).toBe(tx.orderId);
      expect(unneutralised(row.description!)).toBe(tx.description ?? '');
      expect(JSON.parse(row.metadata!)).toEqual(tx.metadata);
    }
    expect(rows.map((r) => r.orderId)).not.toContain('not-yours');
  });

  it('quotes per RFC 4180 and neutralises formula-leading cells, keeping amounts exact', async () => {
    const { text, rows } = await exportCsv();
    expect(text.split('\r\n')[0]).toBe(
      'id,type,status,amount,currency,orderId,description,destination,metadata,createdAt,updatedAt,lastEventId,lastEventType,deliveryStatus,deliveryAttempts,acknowledgedAt',
    );
    expect(text.endsWith('\r\n')).toBe(true);
    const tricky = rows.find((r) => r.amount === '999999999999999999.99999999')!;
    expect(tricky.orderId).toBe(`'${FORMULA_ORDER}`);
    expect(tricky.description).toBe(TRICKY_DESCRIPTION);
    expect(text).toContain('"line one, ""quoted""\u2028line two"');
    const withdraw = rows.find((r) => r.type === 'withdraw')!;
    expect(withdraw.orderId).toBe("'-withdraw-1");
    expect(withdraw.destination).toBe("'@acct");
  });

  it('reports the latest event: delivery status, attempts and the acknowledging 200, empty when never', async () => {
    const { rows } = await exportCsv();
    const completed = rows.find((r) => r.orderId === 'dep-0')!;
    const detail = (await api(stack, merchant.apiToken)('GET', `/ui/viewTransaction?id=${completed.id}`, undefined, { accept: 'application/json' })).json;
    const latest = detail.events.at(-1);
    expect(completed).toMatchObject({ lastEventId: latest.id, lastEventType: 'deposit.completed', deliveryStatus: 'succeeded', deliveryAttempts: '1' });
    // When the whole 200 arrived: the attempt's start plus its duration.
    const ok = latest.delivery.attempts.find((a: any) => a.statusCode === 200);
    expect(completed.acknowledgedAt).toBe(new Date(Date.parse(ok.at) + ok.durationMs).toISOString());

    const withdraw = rows.find((r) => r.type === 'withdraw')!;
    expect(withdraw).toMatchObject({ lastEventType: 'withdraw.failed', deliveryStatus: 'failed', deliveryAttempts: '6', acknowledgedAt: '' });
  });

  it('applies the filters exactly as the list does', async () => {
    for (const query of ['type=withdraw', 'status=completed', 'orderId=dep-3']) {
      const { rows } = await exportCsv(`?${query}`);
      expect(rows.map((r) => r.id)).toEqual((await jsonList(query)).map((t) => t.id));
    }
  });

  it('is documented in the OpenAPI document, beside JSON and HTML, as is /ui/endpointHealth', async () => {
    const doc = (await api(stack, undefined)('GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths['/ui/viewTransaction'].get.responses['200'].content)).toEqual(['application/json', 'text/html', 'text/csv']);
    // Every representation a route answers is published: the viewer's pages and the statement's CSV.
    for (const path of ['/ui/endpointHealth', '/ui/balances', '/ui/statement']) {
      expect([path, Object.keys(doc.paths[path].get.responses['200'].content)]).toEqual([path, ['application/json', 'text/html']]);
    }
    expect(Object.keys(doc.paths['/api/getBalanceHistory'].get.responses['200'].content)).toEqual(['application/json', 'text/csv']);
  });

  it('answers a bad filter with 400 problem+json, and a bad token with 401', async () => {
    const bad = await api(stack, merchant.apiToken)('GET', '/ui/viewTransaction?type=refund', undefined, { accept: 'text/csv' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const anonymous = await api(stack, 'dwk_wrong')('GET', '/ui/viewTransaction', undefined, { accept: 'text/csv' });
    expect(anonymous.status).toBe(401);
  });
});
