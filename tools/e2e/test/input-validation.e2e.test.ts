/**
 * The endpoints of docs/api.md and their errors (docs/api.md#errors) through the gateway: each input that once answered 500 (issue 8 §2) is a
 * 400 validation_failed problem naming the field, and changes nothing.
 */
import { PRINTABLE_OR_EMPTY_PATTERN, PRINTABLE_PATTERN, UUID_PATTERN } from '@dw/contracts';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { parseResponse, type FuzzResponse } from '../fuzz/send';
import { api, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let m: Merchant;
beforeAll(async () => {
  stack = await startStack('input', { RATE_LIMIT_PER_SECOND: '10000' });
  m = stack.createMerchant('Input merchant');
});
afterAll(async () => stack?.close());

let n = 0;
const orderId = () => `input-${++n}`;
const deposit = (extra: Record<string, unknown>) => ({ amount: '1.00', currency: 'USD', orderId: orderId(), ...extra });
const withdraw = (extra: Record<string, unknown>) => deposit({ destination: 'wallet-1', ...extra });

function expectValidationFailed(res: { status: number; headers: Headers; json: any }, path: string) {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status: 400, code: 'validation_failed', requestId: res.headers.get('x-request-id') });
  expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(path);
}

async function transactionCount(): Promise<number> {
  const res = await api(stack, m.apiToken)('GET', '/ui/viewTransaction?limit=100', undefined, { accept: 'application/json' });
  return res.json.items.length;
}

describe('POST /api/createDeposit and /api/createWithdraw: the printable rule on every free-text field', () => {
  const cases: [string, string, () => unknown, string][] = [
    ['NUL in description', '/api/createDeposit', () => deposit({ description: 'a\u0000b' }), '/description'],
    ['NUL in a metadata key', '/api/createDeposit', () => deposit({ metadata: { 'k\u0000': 'v' } }), '/metadata/k\u0000'],
    ['NUL in a metadata value', '/api/createDeposit', () => deposit({ metadata: { k: 'v\u0000' } }), '/metadata/k'],
    ['NUL in destination', '/api/createWithdraw', () => withdraw({ destination: 'w\u0000' }), '/destination'],
    ['NUL in orderId', '/api/createDeposit', () => deposit({ orderId: 'o\u0000' }), '/orderId'],
    ['a lone surrogate in a metadata key', '/api/createDeposit', () => deposit({ metadata: { '\udfff': 'v' } }), '/metadata/\udfff'],
    ['a lone surrogate in a metadata value', '/api/createDeposit', () => deposit({ metadata: { k: '\ud800' } }), '/metadata/k'],
    ['a lone surrogate in description', '/api/createDeposit', () => deposit({ description: 'x\udfff' }), '/description'],
    ['a lone surrogate in orderId', '/api/createDeposit', () => deposit({ orderId: '\ud83d' }), '/orderId'],
    ['a lone surrogate in destination', '/api/createWithdraw', () => withdraw({ destination: '\udc00' }), '/destination'],
    ['a newline in description', '/api/createDeposit', () => deposit({ description: 'two\nlines' }), '/description'],
    ['DEL in a metadata value', '/api/createDeposit', () => deposit({ metadata: { k: '\u007f' } }), '/metadata/k'],
    ['ESC in destination', '/api/createWithdraw', () => withdraw({ destination: '\u001b[31m' }), '/destination'],
    ['a number instead of a string', '/api/createDeposit', () => deposit({ amount: 1e400 }), '/amount'],
    ['an exponent amount', '/api/createDeposit', () => deposit({ amount: '1e5' }), '/amount'],
  ];

  it.each(cases)('%s is a 400 naming the field, and creates nothing', async (_name, url, body, path) => {
    const before = await transactionCount();
    // JSON.stringify writes a lone surrogate as the escape "\udfff", as a client would send it.
    expectValidationFailed(await api(stack, m.apiToken)('POST', url, JSON.stringify(body())), path);
    expect(await transactionCount()).toBe(before);
  });

  it('accepts what the contract calls printable: emoji, bidi marks, C1 characters, non-Latin scripts', async () => {
    const res = await api(stack, m.apiToken)('POST', '/api/createWithdraw', withdraw({ description: '😀 \u202eevil\u202c \u0085 中文', metadata: { '🔑': 'ا' }, destination: '\u2066x\u2069' }));
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ description: '😀 \u202eevil\u202c \u0085 中文', metadata: { '🔑': 'ا' }, destination: '\u2066x\u2069' });
  });

  it('refuses a body with __proto__, and answers deep nesting and broken JSON with 400', async () => {
    for (const raw of ['{"__proto__":{"x":1},"amount":"1","currency":"USD","orderId":"p"}', '['.repeat(5000) + ']'.repeat(5000), '{"amount":"1"']) {
      const res = await api(stack, m.apiToken)('POST', '/api/createDeposit', raw);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe('validation_failed');
    }
  });

  it('forwards a JSON body whatever parameters its content-type carries', async () => {
    const res = await api(stack, m.apiToken)('POST', '/api/createDeposit', deposit({}), { 'content-type': 'application/json;;;' });
    expect(res.status).toBe(201);
  });
});

describe('GET /ui/viewTransaction: ids, dates, cursors and limits', () => {
  const view = (query: string) => api(stack, m.apiToken)('GET', `/ui/viewTransaction?${query}`, undefined, { accept: 'application/json' });
  const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const uuid = '7b0c0000-0000-4000-8000-000000000000';

  it.each([
    ['a urn:uuid id', `id=urn:uuid:${uuid}`, 'querystring:/id'],
    ['a braced id', `id=%7B${uuid}%7D`, 'querystring:/id'],
    ['an id without dashes', `id=${uuid.replace(/-/g, '')}`, 'querystring:/id'],
    ['year 0000', 'from=0000-01-01T00:00:00Z', 'querystring:/from'],
    ['year 10000', 'to=10000-01-01T00:00:00Z', 'querystring:/to'],
    ['February 31st', 'from=2026-02-31T00:00:00Z', 'querystring:/from'],
    ['hour 24', 'from=2026-01-01T24:00:00Z', 'querystring:/from'],
    ['a leap second', 'to=2026-12-31T23:59:60Z', 'querystring:/to'],
    ['an offset PostgreSQL refuses', 'from=2026-01-01T00:00:00%2B16:00', 'querystring:/from'],
    ['an instant before year 1', 'from=0001-01-01T00:00:00%2B01:00', 'querystring:/from'],
    ['a cursor holding 2026-02-31', `cursor=${cursorOf(['2026-02-31T00:00:00.000Z', uuid])}`, 'querystring:/cursor'],
    ['a cursor holding year 0000', `cursor=${cursorOf(['0000-01-01T00:00:00.000Z', uuid])}`, 'querystring:/cursor'],
    ['cursor=%%%garbage', 'cursor=%%%garbage', 'querystring:/cursor'],
    ['cursor=%E0%A4%A', 'cursor=%E0%A4%A', 'querystring:/cursor'],
    ['limit 0', 'limit=0', 'querystring:/limit'],
    ['limit 101', 'limit=101', 'querystring:/limit'],
    ['limit 1.5', 'limit=1.5', 'querystring:/limit'],
    ['a huge limit', 'limit=99999999999999999999', 'querystring:/limit'],
    // Integers only as plain decimal digits: not as JavaScript's Number() would read them.
    ['a hexadecimal limit', 'limit=0x10', 'querystring:/limit'],
    ['an exponent limit', 'limit=1e1', 'querystring:/limit'],
    ['a limit with a space', 'limit=%205', 'querystring:/limit'],
    ['a limit with a plus sign', 'limit=%2B5', 'querystring:/limit'],
    ['a limit with a leading zero', 'limit=05', 'querystring:/limit'],
    ['a limit written 5.0', 'limit=5.0', 'querystring:/limit'],
    ['an empty limit', 'limit=', 'querystring:/limit'],
    ['a NUL in orderId', 'orderId=%00', 'querystring:/orderId'],
    ['limit given twice', 'limit=10&limit=100', 'querystring:/limit'],
    ['a list filter beside id', `id=${uuid}&type=withdraw`, 'querystring:/type'],
    ['orderId given twice, once encoded', 'orderId=a&%6FrderId=b', 'querystring:/orderId'],
  ])('%s is a 400 naming the parameter', async (_name, query, path) => {
    expectValidationFailed(await view(query), path);
  });

  it.each([
    ['a truncated UTF-8 sequence', 'orderId=%E0%A4%A'],
    ['a lone surrogate as WTF-8', 'orderId=%ED%A0%80'],
    ['an overlong "/"', 'orderId=%C0%AF'],
    ['a "%" not followed by two hex digits', 'orderId=50%off'],
  ])('refuses a free-text value that is not percent-encoded UTF-8 (%s) rather than filter on its literal text', async (_name, query) => {
    expectValidationFailed(await view(query), 'querystring:/orderId');
    expectValidationFailed(await api(stack, m.apiToken)('GET', `/api/getBalanceHistory?currency=USD&${query}`), 'querystring:/orderId');
  });

  it('checks the token first: the same query without one is a 401', async () => {
    const res = await api(stack, undefined)('GET', '/ui/viewTransaction?orderId=%E0%A4%A', undefined, { accept: 'application/json' });
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('unauthorized');
  });

  it('reads %25 as a literal "%": the orderId 50%off is found', async () => {
    const created = await api(stack, m.apiToken)('POST', '/api/createDeposit', { orderId: '50%off', amount: '1.00', currency: 'USD' });
    expect(created.status).toBe(201);
    const res = await view('orderId=50%25off');
    expect(res.status).toBe(200);
    expect((res.json as { items: { orderId: string }[] }).items.map((t) => t.orderId)).toEqual(['50%off']);
  });

  it.each(['text/html', 'text/csv'])('answers a bad query with a 4xx, never a 5xx, for Accept: %s', async (accept) => {
    for (const query of ['cursor=%%%garbage', `id=urn:uuid:${uuid}`, 'from=0000-01-01T00:00:00Z']) {
      const res = await api(stack, m.apiToken)('GET', `/ui/viewTransaction?${query}`, undefined, { accept });
      expect(res.status).toBe(400);
    }
  });

  it('refuses a cursor this API did not issue on the downloads too, though they are never paged', async () => {
    for (const cursor of ['bm9wZQ', cursorOf(['2026-02-31T00:00:00.000Z', uuid])]) {
      expectValidationFailed(await api(stack, m.apiToken)('GET', `/ui/viewTransaction?cursor=${cursor}`, undefined, { accept: 'text/csv' }), 'querystring:/cursor');
      expectValidationFailed(await api(stack, m.apiToken)('GET', `/api/getBalanceHistory?cursor=${cursor}`, undefined, { accept: 'text/csv' }), 'querystring:/cursor');
    }
  });
});

describe('a query parameter on an endpoint that takes none', () => {
  it.each([
    ['GET', '/api/getBalance?currency=USD', 'querystring:/currency'],
    ['GET', '/api/getCallbackUrls?x=1', 'querystring:/x'],
    ['GET', '/ui/balances?currency=USD', 'querystring:/currency'],
    ['GET', '/ui/endpointHealth?windowHours=1', 'querystring:/windowHours'],
    ['PUT', '/api/updateCallbackUrlDeposit?url=https://example.com/', 'querystring:/url'],
  ])('%s %s is a 400 naming it, not a filter dropped in silence', async (method, url, path) => {
    const body = method === 'PUT' ? { url: null } : undefined;
    expectValidationFailed(await api(stack, m.apiToken)(method, url, body, { accept: 'application/json' }), path);
  });

  it('refuses a create whose query repeats a body field, and creates nothing', async () => {
    const before = await transactionCount();
    expectValidationFailed(await api(stack, m.apiToken)('POST', '/api/createDeposit?amount=900.00', deposit({})), 'querystring:/amount');
    expect(await transactionCount()).toBe(before);
  });

  it('serves an empty query string, and checks the token before the query', async () => {
    expect((await api(stack, m.apiToken)('GET', '/api/getBalance?')).status).toBe(200);
    expect((await api(stack, undefined)('GET', '/api/getBalance?currency=USD')).status).toBe(401);
  });
});

describe('PUT /api/updateCallbackUrlDeposit and /api/updateCallbackUrlWithdraw: hostile URLs', () => {
  it.each([
    ['a NUL', 'https://example.com/\u0000'],
    ['a space', 'https://exa mple.com/'],
    ['a lone surrogate', 'https://example.com/\udfff'],
    ['user:password', 'https://user:pass@example.com/'],
    ['a port out of range', 'https://example.com:65536/'],
    ['a negative port', 'https://example.com:-1/'],
    ['over 2048 characters', `https://example.com/${'p'.repeat(2030)}`],
    ['broken percent-encoding in the host', 'https://exa%zzmple.com/'],
    ['no host', 'https:///path'],
    ['another scheme', 'file:///etc/passwd'],
  ])('%s is a 400 naming /url, and the stored URL is unchanged', async (_name, url) => {
    const call = api(stack, m.apiToken);
    for (const path of ['/api/updateCallbackUrlDeposit', '/api/updateCallbackUrlWithdraw']) {
      const before = (await call('GET', '/api/getCallbackUrls')).json;
      expectValidationFailed(await call('PUT', path, JSON.stringify({ url })), '/url');
      expect((await call('GET', '/api/getCallbackUrls')).json).toEqual(before);
    }
  });

  it('stores an IDN host and a percent-encoded path exactly as given', async () => {
    const url = 'https://xn--nxasmq6b.example/cb%20x?q=%E2%82%AC';
    const res = await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url });
    expect(res.status).toBe(200);
    expect(res.json.depositCallbackUrl).toBe(url);
  });
});

describe('a request path that is not valid percent-encoding', () => {
  it.each(['/api/getCallbackUrls%ZZ', '/api/%E0%A4%A', '/ui/viewTransaction/%', '/ui/assets/%ED%A0%80'])(
    '%s is a 400 problem+json with the request id, from the gateway and from each internal service',
    async (path) => {
      for (const base of [stack.gateway, stack.transactions, stack.env.UI_URL!]) {
        const res = await request(`${base}${path}`, { headers: { serviceApiToken: m.apiToken } });
        const json = (await res.body.json()) as any;
        expect(res.statusCode).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(json).toMatchObject({ code: 'validation_failed', requestId: res.headers['x-request-id'] });
      }
    },
  );
});

describe('headers', () => {
  it('answers a header section over 16 KiB with a 400 problem', async () => {
    const res = await api(stack, m.apiToken)('GET', '/api/getCallbackUrls', undefined, { 'x-request-id': 'a'.repeat(20_000) });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('serves a header section just under 16 KiB (what the gateway adds does not push it over the limit behind it)', async () => {
    for (const path of ['/api/getCallbackUrls', '/ui/viewTransaction']) {
      const res = await request(`${stack.gateway}${path}`, { headers: { serviceApiToken: m.apiToken, accept: 'application/json', 'x-big': 'a'.repeat(16_100) } });
      await res.body.text();
      expect([path, res.statusCode]).toEqual([path, 200]);
    }
  });

  it('replaces a non-ASCII or overlong x-request-id with its own', async () => {
    for (const id of ['a'.repeat(129), 'caf\u00e9']) {
      const res = await request(`${stack.gateway}/api/getCallbackUrls`, { headers: { serviceApiToken: m.apiToken, 'x-request-id': id } });
      await res.body.text();
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-request-id']).not.toBe(id);
      expect(String(res.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

/**
 * A raw socket to the gateway: fetch and undici refuse to send Keep-Alive, Upgrade or Expect, and
 * some clients do send them. It writes `start` (then `drip` once a second, if given); `answer` is
 * the first final response (the fuzz's parser, which skips 100 Continue), `closed` the time from
 * opening to the server's close.
 */
function rawConnection(start: string | Buffer, drip?: string) {
  const { hostname, port } = new URL(stack.gateway);
  const socket = net.connect(Number(port), hostname);
  const opened = Date.now();
  let received = Buffer.alloc(0);
  const answer = new Promise<FuzzResponse>((resolve, reject) => {
    const check = (closed: boolean) => {
      const parsed = parseResponse(received, false, closed);
      if (parsed) resolve(parsed);
      else if (closed) reject(new Error(`closed before a full answer: ${received.toString('latin1').slice(0, 200)}`));
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      check(false);
    });
    socket.on('close', () => check(true));
  });
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - opened)));
  socket.on('error', () => undefined);
  socket.write(start);
  const dripping = drip === undefined ? undefined : setInterval(() => socket.writable && socket.write(drip), 1_000);
  return {
    answer,
    /** Ms from opening to the server's close, or Infinity if it has not closed within `ms`. */
    closedWithin: (ms: number) => Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), ms))]),
    end() {
      clearInterval(dripping);
      socket.destroy();
    },
  };
}

/** One request with these lines (request line and headers; host and content-length are added). */
async function rawExchange(lines: string[], body: Buffer = Buffer.alloc(0)): Promise<FuzzResponse> {
  const { host } = new URL(stack.gateway);
  const head = [...lines, `host: ${host}`, `content-length: ${body.length}`, '', ''].join('\r\n');
  const connection = rawConnection(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  try {
    return await connection.answer;
  } finally {
    connection.end();
  }
}

describe('connection-level headers a client may send', () => {
  // Each answered 503 before the gateway dropped them on forwarding (undici refuses them).
  const headers = ['Expect: 100-continue', 'Keep-Alive: timeout=5, max=100', 'Connection: keep-alive', 'Upgrade: h2c', 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__', 'TE: trailers', 'Proxy-Connection: keep-alive'];

  it.each(headers)('creates a deposit with %j', async (header) => {
    const body = Buffer.from(JSON.stringify(deposit({})));
    const res = await rawExchange(['POST /api/createDeposit HTTP/1.1', `serviceApiToken: ${m.apiToken}`, 'content-type: application/json', header], body);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
    expect(JSON.parse(res.body)).toMatchObject({ type: 'deposit', status: 'pending' });
  });

  it('closes the connection after its answer when the client asks with Connection: close, and says so', async () => {
    const connection = rawConnection(`GET /api/getCallbackUrls HTTP/1.1\r\nhost: x\r\nserviceApiToken: ${m.apiToken}\r\nconnection: close\r\n\r\n`);
    try {
      expect(await connection.closedWithin(3_000)).toBeLessThan(3_000);
      const res = await connection.answer;
      expect(res.status).toBe(200);
      expect(res.headers.connection).toBe('close');
      expect(res.headers['keep-alive']).toBeUndefined();
    } finally {
      connection.end();
    }
  });

  it('answers a body that trickles in for over 30 s with 400 problem+json and closes the connection', async () => {
    const start = `POST /api/createDeposit HTTP/1.1\r\nhost: x\r\nserviceApiToken: ${m.apiToken}\r\ncontent-type: application/json\r\ncontent-length: 10000\r\n\r\n{"amount":"1.00",`;
    const connection = rawConnection(start, ' ');
    try {
      const closedAfterMs = await connection.closedWithin(40_000);
      const res = await connection.answer;
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(closedAfterMs).toBeGreaterThanOrEqual(29_000);
      expect(closedAfterMs).toBeLessThan(33_000);
    } finally {
      connection.end();
    }
  }, 45_000);

  it.each(headers)('reads the callback URLs with %j', async (header) => {
    const res = await rawExchange(['GET /api/getCallbackUrls HTTP/1.1', `serviceApiToken: ${m.apiToken}`, header]);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
  });
});

describe('a JSON body that is not UTF-8', () => {
  let fresh: Merchant;
  beforeAll(() => {
    fresh = stack.createMerchant('UTF-8 merchant');
  });

  it.each([
    ['a stray byte', [0xff]],
    ['an overlong "/"', [0xc0, 0xaf]],
    ['a UTF-16 surrogate encoded as UTF-8', [0xed, 0xa0, 0x80]],
    ['a sequence cut short', [0xe2, 0x82]],
  ])('is refused with 400 when an orderId holds %s, and creates nothing', async (_label, bytes) => {
    const body = Buffer.concat([Buffer.from('{"amount":"1.00","currency":"USD","orderId":"utf8-'), Buffer.from(bytes), Buffer.from('"}')]);
    const res = await request(`${stack.gateway}/api/createDeposit`, {
      method: 'POST',
      headers: { serviceApiToken: fresh.apiToken, 'content-type': 'application/json' },
      body,
    });
    const json = (await res.body.json()) as any;
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(json).toMatchObject({ code: 'validation_failed', detail: 'The body is not valid UTF-8.' });
    const list = await api(stack, fresh.apiToken)('GET', '/ui/viewTransaction', undefined, { accept: 'application/json' });
    expect(list.json.items).toEqual([]);
  });
});

describe('GET /openapi.json', () => {
  it('publishes the same text, uuid and cursor rules the validators apply', async () => {
    const text = await (await fetch(`${stack.gateway}/openapi.json`)).text();
    for (const pattern of [PRINTABLE_PATTERN, PRINTABLE_OR_EMPTY_PATTERN, UUID_PATTERN, '^[A-Za-z0-9_-]+$']) {
      expect(text).toContain(JSON.stringify(pattern));
    }
  });
});

/** Whether a transaction with this orderId exists for `m`, as the merchant's viewer lists it. */
async function created(orderId: string): Promise<boolean> {
  const res = await api(stack, m.apiToken)('GET', `/ui/viewTransaction?orderId=${encodeURIComponent(orderId)}`, undefined, { accept: 'application/json' });
  expect(res.status).toBe(200);
  return res.json.items.length > 0;
}

describe('the Host header of an HTTP/1.1 request', () => {
  it.each([
    ['missing', [] as string[], 'is required once in an HTTP/1.1 request'],
    ['sent twice', ['host: a', 'Host: b'], 'must be sent once, not more'],
  ])('%s is a 400 problem+json with the request id, and nothing is created', async (_name, hosts, message) => {
    const id = orderId();
    const body = JSON.stringify({ amount: '1.00', currency: 'USD', orderId: id });
    const head = ['POST /api/createDeposit HTTP/1.1', ...hosts, `serviceApiToken: ${m.apiToken}`, 'x-request-id: host-e2e-1', 'content-type: application/json', `content-length: ${body.length}`, 'connection: close', '', ''].join('\r\n');
    const connection = rawConnection(head + body);
    try {
      const res = await connection.answer;
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['x-request-id']).toBe('host-e2e-1');
      expect(JSON.parse(res.body)).toMatchObject({ code: 'validation_failed', requestId: 'host-e2e-1', errors: [{ path: 'header:host', message }] });
    } finally {
      connection.end();
    }
    expect(await created(id)).toBe(false);
  });
});

describe('CONNECT', () => {
  it.each([
    ['to a path', 'CONNECT /api/createDeposit HTTP/1.1', 'connect-e2e-1'],
    ['to an authority', 'CONNECT example.com:443 HTTP/1.1', undefined],
  ])('%s is answered 404 problem+json with the request id, and the connection closes', async (_name, line, requestId) => {
    const { host } = new URL(stack.gateway);
    const head = [line, `host: ${host}`, `serviceApiToken: ${m.apiToken}`, ...(requestId ? [`x-request-id: ${requestId}`] : []), '', ''].join('\r\n');
    const connection = rawConnection(head);
    try {
      const res = await connection.answer;
      expect(await connection.closedWithin(3_000)).toBeLessThan(3_000);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['x-request-id']).toEqual(requestId ?? expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(JSON.parse(res.body)).toMatchObject({ status: 404, code: 'not_found', requestId: res.headers['x-request-id'] });
    } finally {
      connection.end();
    }
  });
});

describe('a JSON body holding a reserved key', () => {
  it.each([
    ['{"__proto__":"y"}', '/metadata/__proto__'],
    ['{"constructor":{"prototype":"y"}}', '/metadata/constructor/prototype'],
  ])('metadata %s is a 400 validation_failed naming the key, and creates nothing', async (metadata, path) => {
    const id = orderId();
    const res = await api(stack, m.apiToken)('POST', '/api/createDeposit', `{"amount":"1.00","currency":"USD","orderId":"${id}","metadata":${metadata}}`);
    expectValidationFailed(res, path);
    expect(res.json.detail).toContain('reserved key');
    expect(res.json.errors).toEqual([{ path, message: 'is a reserved key' }]);
    expect(await created(id)).toBe(false);
  });
});

describe('a JSON body holding a key twice in one object', () => {
  it.each([
    ['amount', '{"amount":"1.00","currency":"USD","orderId":"%ID%","amount":"900.00"}', '/amount'],
    ['orderId', '{"amount":"1.00","currency":"USD","orderId":"%ID%","orderId":"%ID%-b"}', '/orderId'],
    ['a metadata key', '{"amount":"1.00","currency":"USD","orderId":"%ID%","metadata":{"a":"1","a":"2"}}', '/metadata/a'],
  ])('%s twice is a 400 validation_failed naming it, and creates nothing', async (_name, body, path) => {
    const id = orderId();
    const res = await api(stack, m.apiToken)('POST', '/api/createDeposit', body.replaceAll('%ID%', id));
    expectValidationFailed(res, path);
    expect(res.json.errors).toEqual([{ path, message: 'is a duplicate key: each key may appear once in an object' }]);
    expect(await created(id)).toBe(false);
    expect(await created(`${id}-b`)).toBe(false);
  });
});

describe('a body in another charset or content coding', () => {
  async function post(id: string, headers: Record<string, string>, body: Buffer) {
    const res = await request(`${stack.gateway}/api/createDeposit`, {
      method: 'POST',
      headers: { serviceApiToken: m.apiToken, 'x-request-id': `media-${id}`, ...headers },
      body,
    });
    return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as any };
  }
  const expect415 = (res: Awaited<ReturnType<typeof post>>, id: string) => {
    expect(res.status).toBe(415);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ status: 415, code: 'unsupported_media_type', requestId: `media-${id}` });
  };

  it.each(['application/json; charset=iso-8859-1', 'application/json; charset=UTF-16', 'application/json; charset="latin1"'])(
    'content-type %s is a 415, and creates nothing',
    async (contentType) => {
      const id = orderId();
      const body = contentType.includes('16') ? Buffer.from(`{"amount":"1.00","currency":"USD","orderId":"${id}"}`, 'utf16le') : Buffer.from(`{"amount":"1.00","currency":"USD","orderId":"${id}","description":"caf\u00e9"}`, 'latin1');
      expect415(await post(id, { 'content-type': contentType }, body), id);
      expect(await created(id)).toBe(false);
    },
  );

  it.each([
    ['gzip with a gzip body', 'gzip', true],
    ['gzip with a plain body', 'gzip', false],
    ['br', 'br', false],
    ['deflate', 'deflate', false],
  ])('Content-Encoding: %s is a 415, and creates nothing', async (_name, coding, compress) => {
    const id = orderId();
    const json = Buffer.from(JSON.stringify({ amount: '1.00', currency: 'USD', orderId: id }));
    const res = await post(id, { 'content-type': 'application/json', 'content-encoding': coding }, compress ? gzipSync(json) : json);
    expect415(res, id);
    expect(res.headers['accept-encoding']).toBe('identity');
    expect(await created(id)).toBe(false);
  });

  it('accepts charset=utf-8 and Content-Encoding: identity', async () => {
    const id = orderId();
    const json = Buffer.from(JSON.stringify({ amount: '1.00', currency: 'USD', orderId: id }));
    const res = await post(id, { 'content-type': 'application/json; charset="UTF-8"', 'content-encoding': 'identity' }, json);
    expect(res.status).toBe(201);
    expect(await created(id)).toBe(true);
  });
});
