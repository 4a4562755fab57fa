/** The contract, sections 1–4, 6, 7, against the four real processes through the gateway. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { ADMIN_TOKEN, api, freePort, startStack, type Merchant, type Stack, withDatabase } from './support/stack';

let stack: Stack;
let m1: Merchant;
let m2: Merchant;
beforeAll(async () => {
  stack = await startStack('gateway', { RATE_LIMIT_PER_SECOND: '60', SANDBOX_SETTLE_MS: '1500' });
  m1 = stack.createMerchant('Merchant one');
  m2 = stack.createMerchant('Merchant two');
});
afterAll(async () => stack?.close());

let n = 0;
const orderId = () => `e2e-${Date.now()}-${++n}`;

describe('health, readiness and metrics', () => {
  it.each(['api-gateway', 'transactions-svc', 'callback-svc', 'ui'] as const)('%s answers /healthz, /readyz and /metrics without a token', async (name) => {
    const base = `http://127.0.0.1:${stack.ports[name]}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toMatch(/^# HELP /m);
  });
});

describe('authentication (serviceApiToken)', () => {
  const endpoints: [string, string, unknown][] = [
    ['POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: 'x' }],
    ['POST', '/api/createWithdraw', { amount: '1', currency: 'USD', orderId: 'x', destination: 'd' }],
    ['GET', '/api/getCallbackUrls', undefined],
    ['PUT', '/api/updateCallbackUrlDeposit', { url: null }],
    ['PUT', '/api/updateCallbackUrlWithdraw', { url: null }],
    ['GET', '/ui/viewTransaction', undefined],
  ];

  it.each(endpoints)('%s %s answers 401 with the same problem for a missing, empty or unknown token', async (method, url, body) => {
    const bodies = [];
    for (const token of [undefined, '', 'dwk_unknown']) {
      const res = await api(stack, token)(method, url, body);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      // RFC 9110 §15.5.2: a 401 names how to authenticate.
      expect(res.headers.get('www-authenticate')).toBe('serviceApiToken realm="merchant API"');
      expect(res.json.requestId).toBe(res.headers.get('x-request-id'));
      bodies.push({ ...res.json, requestId: undefined });
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({ status: 401, code: 'unauthorized', type: expect.any(String), title: expect.any(String) });
  });

  it('stops accepting a rotated-away token within a second, and accepts the new one', async () => {
    const m = stack.createMerchant('Rotating');
    const call = (t: string) => api(stack, t)('GET', '/api/getCallbackUrls');
    expect((await call(m.apiToken)).status).toBe(200); // now cached by the gateway
    const rotated = stack.cli(['dist/cli/merchant.js', 'rotate-token', '--merchant', m.merchantId]);
    expect(rotated.status).toBe(0);
    const fresh = JSON.parse(rotated.stdout);
    expect(fresh.merchantId).toBe(m.merchantId);
    expect(fresh.apiToken).not.toBe(m.apiToken);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await call(m.apiToken)).status).toBe(401);
    expect((await call(fresh.apiToken)).status).toBe(200);
  });

  it('rotates nothing when RabbitMQ, through which the gateways hear of rotations, cannot be reached', async () => {
    const m = stack.createMerchant('Rotating without a broker');
    const call = (t: string) => api(stack, t)('GET', '/api/getCallbackUrls');
    expect((await call(m.apiToken)).status).toBe(200); // now cached by the gateway
    const closed = await freePort();
    const rotated = stack.cli(['dist/cli/merchant.js', 'rotate-token', '--merchant', m.merchantId], { AMQP_URL: `amqp://guest:guest@127.0.0.1:${closed}` });
    expect(rotated.status).toBe(1);
    expect(rotated.stdout).toBe('');
    expect(rotated.stderr).toContain(`RabbitMQ is not reachable at 127.0.0.1:${closed} (AMQP_URL)`);
    expect(rotated.stderr).toContain('nothing was rotated');
    await new Promise((r) => setTimeout(r, 1100)); // past the cache's own bound: the database still has the old token
    expect((await call(m.apiToken)).status).toBe(200);
  });
});

describe('creating transactions through the gateway', () => {
  it('creates, replays with Idempotent-Replayed: true, and refuses a different body with 409', async () => {
    const call = api(stack, m1.apiToken);
    const body = { amount: '100.50', currency: 'USD', orderId: orderId(), metadata: { k: 'v' } };
    const created = await call('POST', '/api/createDeposit', body);
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(created.json).toMatchObject({ type: 'deposit', status: 'pending', amount: '100.50', orderId: body.orderId });
    const replay = await call('POST', '/api/createDeposit', { ...body, amount: '100.5' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json.id).toBe(created.json.id);
    const conflict = await call('POST', '/api/createDeposit', { ...body, amount: '100.51' });
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe('conflict');
  });

  it('returns every metadata key as stored, line and paragraph separators included, in the create, the list and the detail', async () => {
    const call = api(stack, m1.apiToken);
    const metadata = { 'a\u2028b': 'v1', 'c\u2029d': 'v2', '\u202eright-to-left': 'v3', ok: 'x' };
    const created = await call('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: orderId(), metadata });
    expect(created.status).toBe(201);
    expect(created.json.metadata).toEqual(metadata);
    const asJson = { accept: 'application/json' };
    const detail = await call('GET', `/ui/viewTransaction?id=${created.json.id}`, undefined, asJson);
    expect(detail.json.transaction.metadata).toEqual(metadata);
    const list = await call('GET', `/ui/viewTransaction?orderId=${encodeURIComponent(created.json.orderId)}`, undefined, asJson);
    expect(list.json.items[0].metadata).toEqual(metadata);
  });

  it('creates exactly one transaction for 20 simultaneous identical requests', async () => {
    const call = api(stack, m2.apiToken);
    const body = { amount: '9.99', currency: 'EUR', orderId: orderId(), destination: 'wallet-1' };
    const results = await Promise.all(Array.from({ length: 20 }, () => call('POST', '/api/createWithdraw', body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(19);
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
  });

  it('validates at the edge with problem+json naming each field', async () => {
    const res = await api(stack, m1.apiToken)('POST', '/api/createDeposit', { amount: 1, currency: 'usd', extra: 1 });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('validation_failed');
    expect(res.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/amount', '/currency', '/extra', '/orderId']);
  });

  it('answers 413 for a body over 64 KiB, 415 for a non-JSON body, 400 for broken JSON', async () => {
    const call = api(stack, m1.apiToken);
    const big = await call('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: 'x', description: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    expect(big.json.code).toBe('payload_too_large');
    const text = await call('POST', '/api/createDeposit', 'amount=1', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.json.code).toBe('unsupported_media_type');
    const broken = await call('POST', '/api/createDeposit', '{"amount":', { 'content-type': 'application/json' });
    expect(broken.status).toBe(400);
    expect(broken.json.code).toBe('validation_failed');
  });

  it('answers 401, not 413 or 415, when the token is bad', async () => {
    const res = await api(stack, 'nope')('POST', '/api/createDeposit', 'x'.repeat(70_000), { 'content-type': 'text/plain' });
    expect(res.status).toBe(401);
  });

  it('never answers 5xx to random JSON thrown at the create endpoints', async () => {
    const call = api(stack, m2.apiToken);
    const statuses: number[] = [];
    const fieldish = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.object(), fc.array(fc.string()));
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record(
        { amount: fieldish, currency: fieldish, orderId: fieldish, description: fieldish, metadata: fieldish, destination: fieldish },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/api/createDeposit', '/api/createWithdraw'), body, async (url, b) => {
        const res = await call('POST', url, JSON.stringify(b), { 'content-type': 'application/json' });
        statuses.push(res.status);
        return res.status < 500;
      }),
      { numRuns: 150 },
    );
    expect(statuses.length).toBeGreaterThanOrEqual(150);
  });
});

describe('callback URLs through the gateway', () => {
  it('reads and sets both URLs', async () => {
    const call = api(stack, m1.apiToken);
    expect((await call('GET', '/api/getCallbackUrls')).json).toEqual({ depositCallbackUrl: null, withdrawCallbackUrl: null });
    const set = await call('PUT', '/api/updateCallbackUrlDeposit', { url: 'http://127.0.0.1:9/cb' });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ depositCallbackUrl: 'http://127.0.0.1:9/cb', withdrawCallbackUrl: null });
    const bad = await call('PUT', '/api/updateCallbackUrlWithdraw', { url: 'ftp://x/y' });
    expect(bad.status).toBe(400);
  });
});

describe('request ids and errors', () => {
  it('echoes x-request-id and uses it in problem bodies', async () => {
    const res = await api(stack, undefined)('GET', '/api/getCallbackUrls', undefined, { 'x-request-id': 'trace-me-123' });
    expect(res.headers.get('x-request-id')).toBe('trace-me-123');
    expect(res.json.requestId).toBe('trace-me-123');
    const generated = await fetch(`${stack.gateway}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('marks every merchant answer, refusals included, Cache-Control: no-store and X-Content-Type-Options: nosniff', async () => {
    const as = api(stack, m1.apiToken);
    const answers = [
      await as('POST', '/api/createDeposit', { amount: '2.00', currency: 'USD', orderId: orderId() }),
      await as('GET', '/api/getBalance'),
      await as('GET', '/api/getBalanceHistory?limit=1'),
      await as('GET', '/api/getCallbackUrls'),
      await as('PUT', '/api/updateCallbackUrlWithdraw', { url: null }),
      await as('GET', '/ui/viewTransaction?limit=1'),
      await as('GET', '/api/getBalance?currency=USD'), // 400 from the gateway's own validation
      await api(stack, 'dwk_unknown')('GET', '/api/getBalance'), // 401
    ];
    expect(answers.map((res) => [res.status, res.headers.get('cache-control'), res.headers.get('x-content-type-options')])).toEqual(
      [201, 200, 200, 200, 200, 200, 400, 401].map((status) => [status, 'no-store', 'nosniff']),
    );
  });

  it('serves /docs under a content security policy that forbids framing it', async () => {
    for (const path of ['/docs/', '/docs/static/index.html']) {
      const res = await fetch(`${stack.gateway}${path}`);
      await res.arrayBuffer();
      const policy = res.headers.get('content-security-policy') ?? '';
      expect({ path, status: res.status, framing: /frame-ancestors 'none'/.test(policy), script: /script-src 'self'/.test(policy) }).toEqual({
        path,
        status: 200,
        framing: true,
        script: true,
      });
      expect(policy).not.toContain('upgrade-insecure-requests');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 404 problem+json for an unknown route', async () => {
    const res = await api(stack, m1.apiToken)('GET', '/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.json.code).toBe('not_found');
  });
});

describe('rate limit (RATE_LIMIT_PER_SECOND=60)', () => {
  it('answers 429 with Retry-After beyond the burst, and 401 for a bad token meanwhile', async () => {
    const m = stack.createMerchant('Busy');
    const call = api(stack, m.apiToken);
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 150 }, () => call('GET', '/api/getCallbackUrls')));
    const elapsedS = (Date.now() - started) / 1000;
    const limited = results.filter((r) => r.status === 429);
    const passed = results.filter((r) => r.status === 200).length;
    // A burst of 60, plus what refilled (60/s) while the requests were arriving.
    expect(passed).toBeGreaterThanOrEqual(60);
    expect(passed).toBeLessThanOrEqual(60 + Math.ceil(60 * elapsedS) + 1);
    expect(passed + limited.length).toBe(150);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.json.code).toBe('rate_limited');
    expect(limited[0]!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect((await api(stack, 'bad-token')('GET', '/api/getCallbackUrls')).status).toBe(401);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call('GET', '/api/getCallbackUrls')).status).toBe(200);
  });
});

describe('transactions viewer and state changes', () => {
  it('lists the merchant’s transactions as JSON, opens one, hides other merchants’ ones', async () => {
    const call = api(stack, m1.apiToken);
    const tx = (await call('POST', '/api/createDeposit', { amount: '5.00', currency: 'USD', orderId: orderId() })).json;
    const list = await call('GET', '/ui/viewTransaction?limit=5', undefined, { accept: 'application/json' });
    expect(list.status).toBe(200);
    expect(list.json.items[0].id).toBe(tx.id);
    const one = await call('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' });
    expect(one.json.transaction).toEqual(tx);
    expect(one.json.events[0]).toMatchObject({ type: 'deposit.pending', delivery: { status: expect.any(String), attempts: expect.any(Array) } });
    const other = await api(stack, m2.apiToken)('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' });
    expect(other.status).toBe(404);
    const bad = await call('GET', '/ui/viewTransaction?limit=0', undefined, { accept: 'application/json' });
    expect(bad.status).toBe(400);
  });

  it('settles in the sandbox and moves through the operator API', async () => {
    const call = api(stack, m1.apiToken);
    const settled = (await call('POST', '/api/createDeposit', { amount: '1.66', currency: 'USD', orderId: orderId() })).json;
    const opTx = (await call('POST', '/api/createWithdraw', { amount: '2', currency: 'USD', orderId: orderId(), destination: 'w' })).json;
    const move = (id: string, status: string) =>
      fetch(`${stack.transactions}/internal/transactions/${id}/status`, {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ status }),
      });
    expect((await move(opTx.id, 'processing')).status).toBe(200);
    expect((await move(opTx.id, 'processing')).status).toBe(409);
    await new Promise((r) => setTimeout(r, 2500));
    const view = async (id: string) =>
      (await call('GET', `/ui/viewTransaction?id=${id}`, undefined, { accept: 'application/json' })).json;
    expect((await view(settled.id)).transaction.status).toBe('failed');
    const op = await view(opTx.id);
    expect(op.transaction.status).toBe('processing'); // the settler only moves pending ones
    expect(op.events.map((e: { type: string }) => e.type)).toEqual(['withdraw.pending', 'withdraw.processing']);
  });
});

describe('tracing (W3C traceparent)', () => {
  it('carries the caller’s trace into the event (and so its outbox message) and shows its trace id in the viewer', async () => {
    const traceId = 'ab'.repeat(16);
    const call = api(stack, m1.apiToken);
    const tx = (
      await call('POST', '/api/createDeposit', { amount: '3', currency: 'USD', orderId: orderId() }, {
        traceparent: `00-${traceId}-${'cd'.repeat(8)}-01`,
      })
    ).json;
    const { rows } = await withDatabase(stack, (db) =>
      db.query(`SELECT e.traceparent AS tp FROM transaction_events e WHERE e.transaction_id = $1`, [tx.id]),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].tp).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`));
    const view = await call('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' });
    expect(view.json.traceId).toBe(traceId);
  });
});

describe('tracing across the gateway hop', () => {
  it('forwards one traceparent, in the caller\'s trace and naming the gateway\'s span as parent, never the caller\'s own header', async () => {
    // A recording hop between a second gateway and transactions-svc: what the gateway sends on.
    const seen: { url: string; traceparent: string | string[] | undefined; raw: string[] }[] = [];
    const hop = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', traceparent: req.headers.traceparent, raw: req.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()) });
      const upstream = http.request({ host: '127.0.0.1', port: stack.ports['transactions-svc'], method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
    const gw = await stack.startExtra('api-gateway', { TRANSACTIONS_URL: `http://127.0.0.1:${(hop.address() as AddressInfo).port}` });
    try {
      const traceId = 'ef'.repeat(16);
      const callerSpan = '12'.repeat(8);
      const res = await fetch(`${gw.url}/api/createDeposit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', serviceApiToken: m1.apiToken, traceparent: `00-${traceId}-${callerSpan}-01` },
        body: JSON.stringify({ amount: '4', currency: 'USD', orderId: orderId() }),
      });
      expect(res.status).toBe(201);
      const forwarded = seen.filter((r) => r.url === '/api/createDeposit');
      expect(forwarded).toHaveLength(1);
      expect(forwarded[0]!.raw.filter((h) => h === 'traceparent')).toHaveLength(1);
      const [, trace, parent] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(forwarded[0]!.traceparent)) ?? [];
      expect(trace).toBe(traceId);
      expect(parent).toMatch(/^[0-9a-f]{16}$/);
      expect(parent).not.toBe(callerSpan);
      // The token lookup it needed (a cold cache: this gateway is new) is part of the same trace.
      const lookup = seen.find((r) => r.url === '/internal/auth/resolve');
      expect(String(lookup?.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`));
    } finally {
      await gw.stop();
      await new Promise((resolve) => hop.close(resolve));
    }
  });
});

describe('documents', () => {
  it('serves OpenAPI 3.1 generated from the validating schemas, and Swagger UI at /docs', async () => {
    const doc = (await (await fetch(`${stack.gateway}/openapi.json`)).json()) as { openapi: string; paths: object };
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/api/createDeposit', '/api/createWithdraw', '/api/getCallbackUrls', '/api/updateCallbackUrlDeposit', '/api/updateCallbackUrlWithdraw', '/ui/viewTransaction']) {
      expect(doc.paths).toHaveProperty([p]);
    }
    const docs = await fetch(`${stack.gateway}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
  });
});

describe('readiness and graceful shutdown', () => {
  it('stays ready on the gateway while ui is down (its /ui answers 503), and every service exits 0 on SIGTERM', async () => {
    expect(await stack.stop('ui')).toBe(0);
    // The gateway needs transactions-svc only (docs/api.md#processes-and-health).
    expect((await fetch(`${stack.gateway}/readyz`)).status).toBe(200);
    expect((await fetch(`${stack.gateway}/ui`, { headers: { 'x-request-id': 'ui-down-1' } })).status).toBe(503);
    // An upstream that is down is one warning per request, without a stack (not three lines, two with stacks).
    // The gateway's log reaches this process through a pipe, a moment after the answer.
    const linesOf = () => stack.logs['api-gateway'].join('').split('\n').filter((line) => line.includes('"ui-down-1"'));
    for (let i = 0; i < 50 && linesOf().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 200)); // and any second line would have come too
    const lines = linesOf();
    expect(lines.map((line) => JSON.parse(line) as { level: number; msg: string; error?: { code?: string } })).toEqual([
      expect.objectContaining({ level: 40, msg: 'upstream unavailable', error: expect.objectContaining({ code: 'ECONNREFUSED' }) }),
    ]);
    expect(lines.join('')).not.toContain('stack');
    expect(await stack.stop('api-gateway')).toBe(0);
    expect(await stack.stop('callback-svc')).toBe(0);
    expect(await stack.stop('transactions-svc')).toBe(0);
  });
});
