/**
 * A forwarded request captured on the internal network is worth nothing to the one who captured it
 * (docs/api.md#processes-and-health; docs/decisions.md, the trust model). A small HTTP hop between a gateway and
 * transactions-svc records what the gateway really sends; sent again straight to transactions-svc,
 * its headers with another body are refused, and so are its headers with the same body: 401
 * problem+json, and the database unchanged.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, startStack, type ExtraProcess, type Merchant, type Stack } from './support/stack';

interface Captured {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Forwards everything to transactions-svc, keeping a copy of each /api/ request as it went. */
async function capturingHop(target: number) {
  const captured: Captured[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url?.startsWith('/api/')) captured.push({ method: req.method!, url: req.url, headers: { ...req.headers }, body });
      const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    captured,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** What an attacker on the internal network does: the captured headers, straight to transactions-svc, with a body of their choice. */
function sendDirect(port: number, request: Captured, body: Buffer | string) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const headers = { ...request.headers, 'content-length': String(bytes.length) };
  delete headers.connection;
  return new Promise<{ status: number; type: string; json: any }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: request.method, path: request.url, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

let stack: Stack;
let hop: Awaited<ReturnType<typeof capturingHop>>;
let gateway: ExtraProcess;
let m: Merchant;
beforeAll(async () => {
  stack = await startStack('proof');
  hop = await capturingHop(stack.ports['transactions-svc']);
  gateway = await stack.startExtra('api-gateway', { TRANSACTIONS_URL: hop.url });
  m = stack.createMerchant('Captured');
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await hop?.close();
  await stack?.close();
});

/** The merchant's own call through the gateway behind the hop, and the request the hop saw for it. */
async function throughGateway(method: string, path: string, body: unknown) {
  const before = hop.captured.length;
  const res = await fetch(gateway.url + path, {
    method,
    headers: { serviceApiToken: m.apiToken, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  const request = hop.captured.slice(before).find((c) => c.url === path);
  expect(request).toBeDefined();
  return { status: res.status, json, request: request! };
}

const own = () => api(stack, m.apiToken);
const transactionsOf = async () => (await own()('GET', '/ui/viewTransaction?limit=100', undefined, { accept: 'application/json' })).json.items;

function expectRefused(res: { status: number; type: string; json: any }) {
  expect(res.status).toBe(401);
  expect(res.type).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status: 401, code: 'unauthorized' });
}

describe('a captured updateCallbackUrlDeposit', () => {
  it('with another body: 401, and the callback URL stays the merchant\'s', async () => {
    const sent = await throughGateway('PUT', '/api/updateCallbackUrlDeposit', { url: 'https://93.184.216.34/merchant' });
    expect(sent.status).toBe(200);
    expect(sent.request.headers['x-internal-auth']).toBeDefined();
    const res = await sendDirect(stack.ports['transactions-svc'], sent.request, JSON.stringify({ url: 'https://93.184.216.35/attacker' }));
    expectRefused(res);
    expect((await own()('GET', '/api/getCallbackUrls')).json.depositCallbackUrl).toBe('https://93.184.216.34/merchant');
  });

  it('with the same body, sent again: 401 (the original already succeeded)', async () => {
    const sent = await throughGateway('PUT', '/api/updateCallbackUrlDeposit', { url: 'https://93.184.216.34/first' });
    expect(sent.status).toBe(200);
    await own()('PUT', '/api/updateCallbackUrlDeposit', { url: 'https://93.184.216.34/second' });
    const res = await sendDirect(stack.ports['transactions-svc'], sent.request, sent.request.body);
    expectRefused(res);
    // The replay would have put the first URL back.
    expect((await own()('GET', '/api/getCallbackUrls')).json.depositCallbackUrl).toBe('https://93.184.216.34/second');
  });
});

describe('a captured createWithdraw', () => {
  it('with another body: 401, and no withdraw is created', async () => {
    const orderId = `captured-${randomUUID()}`;
    const sent = await throughGateway('POST', '/api/createWithdraw', { amount: '10.00', currency: 'USD', orderId, destination: 'merchant-account' });
    expect(sent.status).toBe(201);
    const before = await transactionsOf();
    const forged = { amount: '9999.00', currency: 'USD', orderId: `forged-${randomUUID()}`, destination: 'attacker-account' };
    expectRefused(await sendDirect(stack.ports['transactions-svc'], sent.request, JSON.stringify(forged)));
    // Same bytes but for one space: the proof covers bytes, not meaning.
    expectRefused(await sendDirect(stack.ports['transactions-svc'], sent.request, ` ${sent.request.body.toString()}`));
    expect(await transactionsOf()).toEqual(before);
  });

  it('with the same body, sent again: 401', async () => {
    const orderId = `replayed-${randomUUID()}`;
    const sent = await throughGateway('POST', '/api/createWithdraw', { amount: '11.00', currency: 'USD', orderId, destination: 'merchant-account' });
    expect(sent.status).toBe(201);
    const before = await transactionsOf();
    expectRefused(await sendDirect(stack.ports['transactions-svc'], sent.request, sent.request.body));
    expect(await transactionsOf()).toEqual(before);
  });
});

describe('the merchant is not affected', () => {
  it('sends the same request twice with its own x-request-id: both are answered (the gateway proves each apart)', async () => {
    const body = { amount: '12.00', currency: 'USD', orderId: `twice-${randomUUID()}` };
    const headers = { 'x-request-id': `merchant-${randomUUID()}` };
    const a = await own()('POST', '/api/createDeposit', body, headers);
    const b = await own()('POST', '/api/createDeposit', body, headers);
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(a.json.id).toBe(b.json.id);
  });
});
