/**
 * The trust boundary (docs/api.md#processes-and-health, #authentication, #errors; issue 8 §1, §3, §4 "ui outage", §5) against the real
 * processes: only the gateway speaks for a merchant, junk tokens are cheap to refuse, a rotation
 * racing a lookup does not resurrect the old token, the per-token limit holds across two gateways
 * sharing Redis, the token-less pages and the connections are limited per address, and the merchant API stays ready
 * while ui is down.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { api, freePort, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let m1: Merchant;
let m2: Merchant;
beforeAll(async () => {
  // A long token cache, so the floods below (tens of seconds on a busy machine) outlast no entry's TTL.
  // A negative cache of 1,000 so that a flood overflows it in seconds, not minutes.
  stack = await startStack('trust', {
    RATE_LIMIT_PER_SECOND: '1000',
    BAD_TOKEN_LIMIT_PER_MINUTE: '1000000',
    TOKEN_CACHE_TTL_MS: '3600000',
    TOKEN_NEGATIVE_CACHE_SIZE: '1000',
  });
  m1 = stack.createMerchant('Trust one');
  m2 = stack.createMerchant('Trust two');
}, 60_000);
afterAll(async () => stack?.close());

const direct = (base: string) => async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', json: text ? JSON.parse(text) : undefined, headers: res.headers };
};

/** How many token lookups transactions-svc has answered, from its own /metrics. */
async function resolveCalls(): Promise<number> {
  const text = await (await fetch(`${stack.transactions}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('http_server_request_duration_seconds_count{') && line.includes('route="/internal/auth/resolve"')) {
      n += Number(line.split(' ').at(-1));
    }
  }
  return n;
}

const junkOfOurShape = () => `dwk_${randomBytes(32).toString('base64url')}`;

describe('only the gateway speaks for a merchant', () => {
  const forgedProofs: [string, Record<string, string>][] = [
    ['no proof', {}],
    ['a made-up proof', { 'x-internal-auth': `t=${Math.floor(Date.now() / 1000)},n=${'A'.repeat(22)},b=${'0'.repeat(64)},v2=${'ab'.repeat(32)}` }],
  ];

  it.each(forgedProofs)('transactions-svc answers 401 problem+json to a direct caller naming a merchant with %s, and changes nothing', async (_n, proof) => {
    const tx = direct(stack.transactions);
    const headers = { 'x-merchant-id': m1.merchantId, ...proof };
    const attempts = [
      await tx('POST', '/api/createDeposit', headers, { amount: '5', currency: 'USD', orderId: `forged-${randomUUID()}` }),
      await tx('POST', '/api/createWithdraw', headers, { amount: '5', currency: 'USD', orderId: `forged-${randomUUID()}`, destination: 'x' }),
      await tx('PUT', '/api/updateCallbackUrlDeposit', headers, { url: 'https://attacker.example/steal' }),
      await tx('GET', '/api/getCallbackUrls', headers),
      await tx('GET', '/api/transactions', headers),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({ status: 401, code: 'unauthorized' });
    }
    const own = api(stack, m1.apiToken);
    expect((await own('GET', '/api/getCallbackUrls')).json.depositCallbackUrl).toBeNull();
    const list = await own('GET', '/ui/viewTransaction', undefined, { accept: 'application/json' });
    expect(list.json.items).toEqual([]);
  });

  it.each(forgedProofs)('ui answers 401 problem+json to a direct caller naming a merchant with %s', async (_n, proof) => {
    const res = await direct(`http://127.0.0.1:${stack.ports.ui}`)('GET', '/ui/viewTransaction', {
      accept: 'application/json',
      'x-merchant-id': m1.merchantId,
      ...proof,
    });
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.json.code).toBe('unauthorized');
  });

  it('token resolution answers 401 to anyone but the gateway', async () => {
    const res = await direct(stack.transactions)('POST', '/internal/auth/resolve', {}, { tokenHash: 'a'.repeat(64) });
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('unauthorized');
  });

  it("ignores identity headers a client sends to the gateway: the token's merchant is the one acted for", async () => {
    const forged = { 'x-merchant-id': m2.merchantId, 'x-internal-auth': `t=${Math.floor(Date.now() / 1000)},n=${'A'.repeat(22)},b=${'0'.repeat(64)},v2=${'cd'.repeat(32)}` };
    const created = await api(stack, m1.apiToken)('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: `own-${randomUUID()}` }, forged);
    expect(created.status).toBe(201);
    const seen = await api(stack, m2.apiToken)('GET', `/ui/viewTransaction?id=${created.json.id}`, undefined, { accept: 'application/json' });
    expect(seen.status).toBe(404);
  });

  it('the operator API keeps its own admin token', async () => {
    const res = await direct(stack.transactions)('POST', `/internal/transactions/${randomUUID()}/status`, { 'x-internal-auth': 'x' }, { status: 'completed' });
    expect(res.status).toBe(401);
  });
});

describe('unauthenticated traffic is cheap to refuse', () => {
  async function flood(tokens: Iterable<string>, concurrency = 32): Promise<Map<number, number>> {
    const pool = new Pool(stack.gateway, { connections: concurrency });
    const statuses = new Map<number, number>();
    const it = tokens[Symbol.iterator]();
    const worker = async () => {
      for (let next = it.next(); !next.done; next = it.next()) {
        const res = await pool.request({ method: 'GET', path: '/api/getCallbackUrls', headers: { serviceapitoken: next.value } });
        await res.body.dump();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      await pool.close();
    }
    return statuses;
  }

  function* junk(n: number, make: (i: number) => string) {
    for (let i = 0; i < n; i++) yield make(i);
  }

  it('refuses 100,000 distinct malformed tokens with 401 and not one lookup', async () => {
    const before = await resolveCalls();
    const statuses = await flood(junk(100_000, (i) => (i % 2 ? `junk-${i}-${randomUUID()}` : `dwk_${i}`)));
    expect(Object.fromEntries(statuses)).toEqual({ 401: 100_000 });
    expect(await resolveCalls()).toBe(before);
  }, 300_000);

  it('keeps a valid token cached through more distinct unknown tokens of our shape than the negative cache holds', async () => {
    const own = api(stack, m1.apiToken);
    expect((await own('GET', '/api/getCallbackUrls')).status).toBe(200); // now cached
    // Three times TOKEN_NEGATIVE_CACHE_SIZE: the negative cache overflows and evicts its own entries.
    const statuses = await flood(junk(3_000, junkOfOurShape));
    expect(Object.fromEntries(statuses)).toEqual({ 401: 3_000 });
    const before = await resolveCalls();
    expect((await own('GET', '/api/getCallbackUrls')).status).toBe(200);
    expect(await resolveCalls()).toBe(before); // answered from the cache: nothing was evicted
  }, 300_000);

  it('answers a repeated unknown token from the negative cache', async () => {
    const token = junkOfOurShape();
    const before = await resolveCalls();
    for (let i = 0; i < 5; i++) expect((await api(stack, token)('GET', '/api/getCallbackUrls')).status).toBe(401);
    expect(await resolveCalls()).toBe(before + 1);
  });
});

describe('metrics on their own port (METRICS_PORT)', () => {
  it('serves GET /metrics there only, and nothing else there; health and readiness stay on the main port', async () => {
    const metricsPort = await freePort();
    const ui = await stack.startExtra('ui', { METRICS_PORT: String(metricsPort) });
    try {
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^# HELP /m);
      expect(metrics.headers.get('x-request-id')).toBeTruthy();
      expect(metrics.headers.get('x-content-type-options')).toBe('nosniff');
      for (const path of ['/ui/viewTransaction', '/healthz', '/api/getCallbackUrls']) {
        const other = await fetch(`http://127.0.0.1:${metricsPort}${path}`, { headers: { 'x-merchant-id': m1.merchantId, 'x-request-id': 'mp-1' } });
        expect(other.status).toBe(404);
        // Every answer carries its request id, and every error is problem+json, on this port too.
        expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(other.headers.get('x-request-id')).toBe('mp-1');
        expect(await other.json()).toMatchObject({ status: 404, code: 'not_found', requestId: 'mp-1' });
      }
      expect((await fetch(`${ui.url}/metrics`)).status).toBe(404); // not on the main port once it has its own
      expect((await fetch(`${ui.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${ui.url}/readyz`)).status).toBe(200);
    } finally {
      await ui.stop();
    }
  });

  it("keeps the gateway's public port free of /metrics when METRICS_PORT is set", async () => {
    const metricsPort = await freePort();
    const gw = await stack.startExtra('api-gateway', { METRICS_PORT: String(metricsPort) });
    try {
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });
});

describe('bad tokens beyond a per-address limit', () => {
  it('answer 401 up to BAD_TOKEN_LIMIT_PER_MINUTE, then 429 problem+json with Retry-After; a good token is still served, cached or not', async () => {
    const gw = await stack.startExtra('api-gateway', { BAD_TOKEN_LIMIT_PER_MINUTE: '5' });
    try {
      await new Promise((r) => setTimeout(r, 1000)); // subscribed to rotations (which empties its cache)
      const call = (token: string) => direct(gw.url)('GET', '/api/getCallbackUrls', { serviceApiToken: token });
      expect((await call(m1.apiToken)).status).toBe(200); // known to this gateway's cache
      for (let i = 0; i < 5; i++) expect((await call(junkOfOurShape())).status).toBe(401);
      const before = await resolveCalls();
      for (const token of ['not-even-a-token', junkOfOurShape()]) {
        const limited = await call(token);
        expect(limited.status).toBe(429);
        expect(limited.type).toMatch(/^application\/problem\+json/);
        expect(limited.json).toMatchObject({ status: 429, code: 'rate_limited' });
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // Only the token of our shape was looked up, one at a time and a second late (the slow lane).
      expect(await resolveCalls()).toBe(before + 1);
      // A good token this gateway has not seen is not refused for the bad ones from its address.
      expect((await call(m2.apiToken)).status).toBe(200);
      expect((await call(m1.apiToken)).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });
});

describe('the token-less pages beyond a per-address limit', () => {
  it('answer up to PUBLIC_LIMIT_PER_MINUTE, then 429 problem+json with Retry-After; probes and merchants are not limited by it', async () => {
    const gw = await stack.startExtra('api-gateway', { PUBLIC_LIMIT_PER_MINUTE: '4' });
    try {
      const get = (path: string, headers: Record<string, string> = {}) => direct(gw.url)('GET', path, headers);
      const raw = async (path: string) => {
        const res = await fetch(gw.url + path);
        await res.arrayBuffer();
        return res.status;
      };
      // One bucket for all of them: the document, the docs, the viewer's page and an asset.
      expect([await raw('/openapi.json'), await raw('/docs/'), await raw('/ui'), await raw('/ui/assets/app.css')]).toEqual([200, 200, 200, 200]);
      for (const path of ['/openapi.json', '/docs/', '/ui', '/ui/assets/app.css']) {
        const limited = await get(path);
        expect({ path, status: limited.status }).toEqual({ path, status: 429 });
        expect(limited.type).toMatch(/^application\/problem\+json/);
        expect(limited.json).toMatchObject({ status: 429, code: 'rate_limited' });
        expect(Number(limited.headers.get('retry-after'))).toBe(15); // 4 a minute: one every 15 s
      }
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(200);
      expect((await get('/api/getCallbackUrls', { serviceApiToken: m1.apiToken })).status).toBe(200);
      expect((await get('/ui/viewTransaction', { serviceApiToken: m1.apiToken, accept: 'application/json' })).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });
});

describe('connections beyond a per-address limit', () => {
  it('answer 429 with Connection: close and create nothing; another address, and the same once it closed some, create as before', async () => {
    const gw = await stack.startExtra('api-gateway', { GATEWAY_CONNECTIONS_PER_ADDRESS: '3' });
    const port = Number(new URL(gw.url).port);
    // A create on a connection of its own (no agent: a fresh one), from `localAddress`.
    const create = (orderId: string, localAddress = '127.0.0.1') =>
      new Promise<{ status: number; connection?: string; body: Record<string, unknown> }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, localAddress, agent: false, method: 'POST', path: '/api/createDeposit', headers: { 'content-type': 'application/json', serviceApiToken: m1.apiToken } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ amount: '1.00', currency: 'USD', orderId }));
      });
    const idle = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.on('error', () => undefined).once('connect', () => resolve(s));
          }),
      ),
    );
    try {
      const orderId = `conn-${randomUUID()}`;
      const refused = await create(orderId);
      expect(refused).toMatchObject({ status: 429, connection: 'close', body: { status: 429, code: 'rate_limited' } });
      expect(await create(`conn-other-${randomUUID()}`, '127.0.0.2')).toMatchObject({ status: 201 });
      for (const s of idle) s.destroy();
      await new Promise((r) => setTimeout(r, 200));
      // Nothing was written by the refused create: the same orderId now creates, not replays.
      expect(await create(orderId)).toMatchObject({ status: 201, body: { orderId } });
    } finally {
      for (const s of idle) s.destroy();
      await gw.stop();
    }
  });
});

describe('a token rotation racing a lookup', () => {
  /** An HTTP hop in front of transactions-svc that holds token-lookup answers until released. */
  async function holdingProxy() {
    const held: (() => void)[] = [];
    let holding = false;
    const server = http.createServer((req, res) => {
      const upstream = http.request(
        { host: '127.0.0.1', port: stack.ports['transactions-svc'], method: req.method, path: req.url, headers: req.headers },
        (up) => {
          const send = () => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          };
          if (holding && req.url === '/internal/auth/resolve') held.push(send);
          else send();
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      hold: () => (holding = true),
      heldCount: () => held.length,
      release: () => {
        holding = false;
        for (const send of held.splice(0)) send();
      },
      close: () => new Promise<void>((r) => server.close(() => r())),
    };
  }

  it('does not put the rotated-away token back in the cache when its lookup answers after the broadcast', async () => {
    const proxy = await holdingProxy();
    const gw = await stack.startExtra('api-gateway', { TRANSACTIONS_URL: proxy.url });
    try {
      await new Promise((r) => setTimeout(r, 1000)); // the gateway subscribes to rotations
      const m = stack.createMerchant('Racing');
      const call = (t: string) => direct(gw.url)('GET', '/api/getCallbackUrls', { serviceApiToken: t });
      proxy.hold();
      const inFlight = call(m.apiToken); // its lookup reaches the database, the answer is held
      const deadline = Date.now() + 5000;
      while (proxy.heldCount() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(proxy.heldCount()).toBe(1);
      const rotated = stack.cli(['dist/cli/merchant.js', 'rotate-token', '--merchant', m.merchantId]);
      expect(rotated.status).toBe(0);
      await new Promise((r) => setTimeout(r, 500)); // the broadcast arrives
      proxy.release(); // the stale answer ("this token is merchant m") arrives after the rotation
      await inFlight;
      expect((await call(m.apiToken)).status).toBe(401);
      expect((await call(JSON.parse(rotated.stdout).apiToken)).status).toBe(200);
    } finally {
      await gw.stop();
      await proxy.close();
    }
  });
});

describe('the per-token rate limit across gateway replicas (REDIS_URL)', () => {
  const prefix = `e2e-${randomUUID()}:`;
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  async function burst(urls: string[], token: string, n: number) {
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => direct(urls[i % urls.length]!)('GET', '/api/getCallbackUrls', { serviceApiToken: token })),
    );
    return { results, seconds: (Date.now() - started) / 1000 };
  }

  it('two gateways sharing one Redis let RATE_LIMIT_PER_SECOND through between them, then 429 with Retry-After', async () => {
    const env = { RATE_LIMIT_PER_SECOND: '5', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix };
    const [a, b] = await Promise.all([stack.startExtra('api-gateway', env), stack.startExtra('api-gateway', env)]);
    try {
      const m = stack.createMerchant('Limited');
      // Warm both caches first, then let the bucket fill again.
      await direct(a.url)('GET', '/healthz');
      await burst([a.url, b.url], m.apiToken, 2);
      await new Promise((r) => setTimeout(r, 1200));
      const { results, seconds } = await burst([a.url, b.url], m.apiToken, 20);
      const passed = results.filter((r) => r.status === 200).length;
      const limited = results.filter((r) => r.status === 429);
      // A bucket of 5 refilled at 5 a second: 5, plus what refilled while the burst ran.
      expect(passed).toBeGreaterThanOrEqual(5);
      expect(passed).toBeLessThanOrEqual(5 + Math.ceil(seconds * 5));
      expect(passed).toBeLessThan(10); // per-replica buckets would have let 10 through
      expect(limited.length).toBe(20 - passed);
      for (const r of limited) {
        expect(r.json).toMatchObject({ status: 429, code: 'rate_limited' });
        expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      }
      await redis.connect();
      expect((await redis.keys(`${prefix}rl:*`)).length).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('while Redis is unreachable: open (the default) limits per replica, closed answers 503', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const base = { RATE_LIMIT_PER_SECOND: '3', REDIS_URL: dead, REDIS_PREFIX: prefix };
    const [open, closed] = await Promise.all([
      stack.startExtra('api-gateway', base),
      stack.startExtra('api-gateway', { ...base, RATE_LIMIT_REDIS_DOWN: 'closed' }),
    ]);
    try {
      const m = stack.createMerchant('Redis down');
      const opened = (await burst([open.url], m.apiToken, 6)).results.map((r) => r.status);
      expect(opened.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
      expect(opened.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
      const res = await direct(closed.url)('GET', '/api/getCallbackUrls', { serviceApiToken: m.apiToken });
      expect(res.status).toBe(503);
      expect(res.json.code).toBe('service_unavailable');
    } finally {
      await Promise.all([open.stop(), closed.stop()]);
    }
  });
});

describe('a ui outage does not take the API down', () => {
  it('keeps the gateway ready and the merchant API working while ui is down; /ui routes answer 503 problem+json', async () => {
    await stack.stop('ui');
    try {
      const ready = await fetch(`${stack.gateway}/readyz`);
      expect(ready.status).toBe(200);
      const own = api(stack, m1.apiToken);
      expect((await own('POST', '/api/createDeposit', { amount: '2', currency: 'USD', orderId: `ui-down-${randomUUID()}` })).status).toBe(201);
      for (const [path, token] of [
        ['/ui/viewTransaction', m1.apiToken],
        ['/ui', undefined],
      ] as const) {
        const res = await api(stack, token)('GET', path, undefined, { accept: 'application/json' });
        expect(res.status).toBe(503);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.json.code).toBe('service_unavailable');
      }
    } finally {
      await stack.start('ui');
    }
    const back = await api(stack, m1.apiToken)('GET', '/ui/viewTransaction', undefined, { accept: 'application/json' });
    expect(back.status).toBe(200);
  });
});
