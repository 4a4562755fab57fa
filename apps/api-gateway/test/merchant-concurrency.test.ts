/**
 * A merchant's requests in progress through one upstream are bounded (merchant-concurrency.ts): past
 * its share a request waits its turn, then is refused with 429, while another merchant's requests
 * go straight through, as do the same merchant's requests to the other upstream. The gateway listens
 * for real and forwards to a real HTTP server whose answers the test holds and releases.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { apiTokenHash } from '@dw/contracts';
import { InternalAuth } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import { TokenResolver } from '../src/auth/token-resolver';
import { upstream } from '../src/upstreams';
import { buildTestGateway } from './support/gateway';

const SECRET = 'concurrency-test-secret-0123456789abcdef';
const token = () => `dwk_${randomBytes(32).toString('base64url')}`;
const A = { token: token(), merchant: '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e0a' };
const B = { token: token(), merchant: '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e0b' };
const SHARE = 2;
const WAITING = 1;
const WAIT_MS = 400;
const PAGES = 1;

let upstreamServer: http.Server;
let gateway: FastifyInstance;
let base: string;
/** Answers the upstream holds, by merchant, in arrival order; `release` answers the oldest. */
const held = new Map<string, http.ServerResponse[]>();
const arrived: string[] = [];

const release = (merchant: string) => held.get(merchant)!.shift()!.end(JSON.stringify({ depositCallbackUrl: null, withdrawCallbackUrl: null }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  upstreamServer = http.createServer((req, res) => {
    const merchant = String(req.headers['x-merchant-id'] ?? 'none');
    arrived.push(`${merchant} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.startsWith('/ui/endpointHealth')) return void res.end('{"endpoints":[]}');
    held.set(merchant, [...(held.get(merchant) ?? []), res]);
  });
  await new Promise<void>((resolve) => upstreamServer.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}`;
  // A pool of 2 shares: beyond its share a merchant is admitted only while a share stays free, which
  // with 2 shares is never while it holds its own.
  ({ gateway, base } = await startGateway(2 * SHARE));
});

let upstreamUrl: string;

async function startGateway(connections: number): Promise<{ gateway: FastifyInstance; base: string }> {
  const merchants = new Map([A, B].map((m) => [apiTokenHash(m.token), m.merchant]));
  const app = await buildTestGateway({
    resolver: new TokenResolver(async (hash) => merchants.get(hash), 30_000),
    internalAuth: new InternalAuth([SECRET]),
    transactions: upstream(upstreamUrl, 5_000),
    ui: upstream(upstreamUrl, 5_000),
    merchantShares: { perMerchant: SHARE, maxWaiting: WAITING, waitMs: WAIT_MS, connections },
    pagesPerMerchant: PAGES,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { gateway: app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}
afterAll(async () => {
  for (const list of held.values()) for (const res of list) res.destroy();
  await gateway?.close();
  upstreamServer.closeAllConnections();
  await new Promise((resolve) => upstreamServer.close(resolve));
});
beforeEach(() => {
  arrived.length = 0;
});

const get = (who: { token: string }, path = '/api/getCallbackUrls', at = base, headers: Record<string, string> = {}) => {
  const started = Date.now();
  return fetch(`${at}${path}`, { headers: { serviceApiToken: who.token, ...headers } }).then(async (res) => ({
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
    ms: Date.now() - started,
  }));
};

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await sleep(10);
  }
}
const upstreamHas = (merchant: string) => arrived.filter((a) => a.startsWith(merchant)).length;

describe("a merchant's requests in progress, per upstream", () => {
  it('lets a merchant past its share wait its turn, and sends the waiting request once one of its answers is over', async () => {
    const first = [get(A), get(A)];
    await until('A’s share at the upstream', () => upstreamHas(A.merchant) === SHARE);
    const third = get(A);
    await sleep(100);
    expect(upstreamHas(A.merchant)).toBe(SHARE); // waiting at the gateway, not sent

    release(A.merchant);
    await until('the waiting request sent', () => upstreamHas(A.merchant) === SHARE + 1);
    release(A.merchant);
    release(A.merchant);
    for (const res of await Promise.all([...first, third])) expect(res.status).toBe(200);
  });

  it('answers another merchant at once meanwhile, and the same merchant through the other upstream', async () => {
    const mine = [get(A), get(A), get(A)];
    await until('A’s share at the upstream', () => upstreamHas(A.merchant) === SHARE);

    const other = get(B);
    await until('B’s request at the upstream', () => upstreamHas(B.merchant) === 1);
    release(B.merchant);
    expect((await other).status).toBe(200);
    // The ui is another upstream with shares of its own.
    expect((await get(A, '/ui/endpointHealth')).status).toBe(200);

    for (let i = 0; i < SHARE + 1; i++) {
      await until('an answer of A to release', () => (held.get(A.merchant)?.length ?? 0) > 0);
      release(A.merchant);
    }
    for (const res of await Promise.all(mine)) expect(res.status).toBe(200);
  });

  it('refuses with 429 and Retry-After a request that waited its whole wait, and at once one past the waiting bound', async () => {
    const mine = [get(A), get(A)];
    await until('A’s share at the upstream', () => upstreamHas(A.merchant) === SHARE);
    const waited = get(A);
    await sleep(50);
    const overflow = await get(A);
    expect(overflow.status).toBe(429);
    expect(overflow.ms).toBeLessThan(WAIT_MS);
    expect(overflow.retryAfter).toBe('1');
    expect(JSON.parse(overflow.body)).toMatchObject({ code: 'rate_limited', status: 429, detail: expect.stringMatching(/Too many of your requests are in progress at once \(2 are always admitted\)/) });

    const refused = await waited;
    expect(refused.status).toBe(429);
    expect(refused.ms).toBeGreaterThanOrEqual(WAIT_MS - 5);
    expect(upstreamHas(A.merchant)).toBe(SHARE); // neither was ever sent

    release(A.merchant);
    release(A.merchant);
    for (const res of await Promise.all(mine)) expect(res.status).toBe(200);
    // Its share is whole again.
    const again = get(A);
    await until('the next request sent', () => upstreamHas(A.merchant) === SHARE + 1);
    release(A.merchant);
    expect((await again).status).toBe(200);
  });

  it('gives a place back when the client leaves: a request cut off in progress, and one that left while waiting', async () => {
    const cut = new AbortController();
    const leaving = new AbortController();
    const inProgress = [
      fetch(`${base}/api/getCallbackUrls`, { headers: { serviceApiToken: A.token }, signal: cut.signal }).catch(() => 'cut'),
      get(A),
    ];
    await until('A’s share at the upstream', () => upstreamHas(A.merchant) === SHARE);
    const waiting = fetch(`${base}/api/getCallbackUrls`, { headers: { serviceApiToken: A.token }, signal: leaving.signal }).catch(() => 'left');
    await sleep(50);
    leaving.abort();
    expect(await waiting).toBe('left');
    await sleep(200); // the gateway sees that client go before the place below comes free
    cut.abort();
    expect(await inProgress[0]).toBe('cut');

    // One place is free again (the cut one), and the waiter that left took none: the next is sent at once.
    const next = get(A);
    await until('the next request sent', () => upstreamHas(A.merchant) >= SHARE + 1);
    await sleep(100);
    expect(upstreamHas(A.merchant)).toBe(SHARE + 1);
    while ((held.get(A.merchant)?.length ?? 0) > 0) held.get(A.merchant)!.shift()!.end('{"depositCallbackUrl":null,"withdrawCallbackUrl":null}');
    expect((await next).status).toBe(200);
    expect((await inProgress[1]) as { status: number }).toMatchObject({ status: 200 });
  });

  it('lets a merchant alone go beyond its share to transactions-svc while a whole share stays free, and keeps that share for the next merchant', async () => {
    const roomy = await startGateway(3 * SHARE); // beyond its share while fewer than 2 shares are in progress
    try {
      const mine = Array.from({ length: 2 * SHARE + 1 }, () => get(A, undefined, roomy.base));
      await until('A’s two shares at the upstream', () => upstreamHas(A.merchant) === 2 * SHARE);
      await sleep(100);
      expect(upstreamHas(A.merchant)).toBe(2 * SHARE); // the last one waits: a share must stay free

      const others = [get(B, undefined, roomy.base), get(B, undefined, roomy.base)];
      await until('B’s share at the upstream', () => upstreamHas(B.merchant) === SHARE);
      release(B.merchant);
      release(B.merchant);
      for (const res of await Promise.all(others)) expect(res.status).toBe(200);

      for (let i = 0; i < 2 * SHARE + 1; i++) {
        await until('an answer of A to release', () => (held.get(A.merchant)?.length ?? 0) > 0);
        release(A.merchant);
      }
      for (const res of await Promise.all(mine)) expect(res.status).toBe(200);
    } finally {
      await roomy.gateway.close();
    }
  });

  it('never lets a merchant beyond its share to the ui, however free the pool', async () => {
    const roomy = await startGateway(10 * SHARE);
    try {
      const path = '/ui/balances';
      const mine = Array.from({ length: SHARE + 1 }, () => get(A, path, roomy.base));
      await until('A’s share at the ui', () => upstreamHas(A.merchant) === SHARE);
      await sleep(100);
      expect(upstreamHas(A.merchant)).toBe(SHARE);
      for (let i = 0; i < SHARE + 1; i++) {
        await until('an answer of A to release', () => (held.get(A.merchant)?.length ?? 0) > 0);
        release(A.merchant);
      }
      for (const res of await Promise.all(mine)) expect(res.status).toBe(200);
    } finally {
      await roomy.gateway.close();
    }
  });

  it("counts a merchant's list pages apart, in a smaller share: the next page waits while one transaction, an export and another merchant's page go through", async () => {
    const page = (who: { token: string }, accept = 'application/json') => get(who, '/ui/viewTransaction?limit=100', base, { accept });
    const first = page(A);
    await until('A’s first page at the ui', () => upstreamHas(A.merchant) === 1);
    const second = page(A, 'text/html');
    await sleep(100);
    expect(upstreamHas(A.merchant)).toBe(PAGES); // the second page (HTML counts too) waits at the gateway

    const one = get(A, '/ui/viewTransaction?id=7b0c0000-0000-4000-8000-000000000000', base, { accept: 'application/json' });
    const csv = page(A, 'text/csv');
    const others = page(B);
    await until('A’s transaction and export, and B’s page, at the ui', () => upstreamHas(A.merchant) === 3 && upstreamHas(B.merchant) === 1);
    expect(arrived.filter((a) => a.includes('id=7b0c'))).toHaveLength(1);

    release(B.merchant);
    expect((await others).status).toBe(200);
    release(A.merchant); // the first page: the second is sent
    await until('A’s second page at the ui', () => upstreamHas(A.merchant) === 4);
    for (let i = 0; i < 3; i++) release(A.merchant);
    for (const res of await Promise.all([first, second, one, csv])) expect(res.status).toBe(200);
  });

  it('refuses a list page that waited its whole wait with a 429 that says what it counts', async () => {
    const page = () => get(A, '/ui/viewTransaction', base, { accept: 'application/json' });
    const first = page();
    await until('A’s page at the ui', () => upstreamHas(A.merchant) === 1);
    const waited = await page();
    expect(waited.status).toBe(429);
    expect(waited.retryAfter).toBe('1');
    expect(JSON.parse(waited.body).detail).toMatch(/Too many of your list pages are in progress at once \(1 is always admitted\)/);
    release(A.merchant);
    expect((await first).status).toBe(200);
  });
});

