/**
 * The guard in front of an internal service's merchant routes (requireMerchant, requireInternalCaller)
 * on a real service shell: it acts only on a fresh proof of this very request, its exact body
 * included, presented for the first time. Every refusal is the same 401 problem+json and reaches
 * no handler.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { createService, InternalAuth, requireInternalCaller, requireMerchant } from '../src';

const SECRET = 'merchant-scope-test-secret-0123456789abcdef';
const MERCHANT = '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01';
const signer = new InternalAuth([SECRET]);

let app: FastifyInstance;
let acted: { merchantId: string; body: unknown }[];
beforeEach(async () => {
  acted = [];
  app = createService({ logger: pino({ level: 'silent' }), readiness: {} });
  const auth = new InternalAuth([SECRET]);
  const record = async (request: { merchantId?: string; body: unknown }) => {
    acted.push({ merchantId: request.merchantId ?? '', body: request.body });
    return { ok: true };
  };
  await app.register(async (scope) => {
    requireMerchant(scope, auth);
    scope.put('/api/callback-url', { schema: { body: Type.Object({ url: Type.String() }) } }, record);
    scope.post('/api/rotate', record);
    scope.get('/api/list', record);
  });
  await app.register(async (scope) => {
    requireInternalCaller(scope, auth);
    scope.post('/internal/resolve', record);
  });
  await app.ready();
});
afterEach(async () => app.close());

/** The request as the gateway sends it: the body's exact bytes, and its proof of them. */
function signed(method: 'GET' | 'POST' | 'PUT', url: string, body?: string, merchantId = MERCHANT): InjectOptions {
  const requestId = randomUUID();
  const headers: Record<string, string> = signer.headers({ method, path: url, merchantId, requestId, body });
  if (body !== undefined) headers['content-type'] = 'application/json';
  return { method, url, headers, ...(body === undefined ? {} : { payload: body }) };
}

async function expectRefused(opts: InjectOptions) {
  const before = acted.length;
  const res = await app.inject(opts);
  expect(res.statusCode).toBe(401);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({
    status: 401,
    code: 'unauthorized',
    detail: 'This service answers only requests that come through the API gateway.',
  });
  expect(acted.length).toBe(before);
}

const ours = '{"url":"https://merchant.example/cb"}';
const theirs = '{"url":"https://attacker.example/cb"}';

describe('the proof covers the body', () => {
  it('acts on a proven request with exactly the body signed', async () => {
    const res = await app.inject(signed('PUT', '/api/callback-url', ours));
    expect(res.statusCode).toBe(200);
    expect(acted).toEqual([{ merchantId: MERCHANT, body: { url: 'https://merchant.example/cb' } }]);
  });

  it('refuses the same headers with another body, before parsing it', async () => {
    const captured = signed('PUT', '/api/callback-url', ours);
    await expectRefused({ ...captured, payload: theirs });
    // Not valid JSON, not valid UTF-8, or compressed: still the proof's 401, never a 400 or 415.
    await expectRefused({ ...captured, payload: '{"url":' });
    await expectRefused({ ...captured, payload: Buffer.from([0x7b, 0xff, 0x7d]) });
    await expectRefused({ ...captured, payload: theirs, headers: { ...captured.headers, 'content-encoding': 'gzip' } });
  });

  it('refuses a byte-level change that parses to the same JSON', async () => {
    const captured = signed('PUT', '/api/callback-url', ours);
    await expectRefused({ ...captured, payload: ` ${ours}` });
  });

  it('refuses a body added to a request signed without one, and a body dropped from one signed with one', async () => {
    const bodiless = signed('POST', '/api/rotate');
    await expectRefused({ ...bodiless, payload: '{}', headers: { ...bodiless.headers, 'content-type': 'application/json' } });
    const withBody = signed('POST', '/api/rotate', '{"overlap":"0"}');
    const { payload: _dropped, ...dropped } = withBody;
    await expectRefused({ ...dropped, headers: { ...withBody.headers, 'content-type': undefined } as never });
  });

  it('acts on proven requests without a body (POST and GET)', async () => {
    expect((await app.inject(signed('POST', '/api/rotate'))).statusCode).toBe(200);
    expect((await app.inject(signed('GET', '/api/list?limit=5'))).statusCode).toBe(200);
    expect(acted).toHaveLength(2);
  });

  it('covers the body of token resolution too (a proof naming no merchant)', async () => {
    const body = JSON.stringify({ tokenHash: 'a'.repeat(64) });
    const captured = signed('POST', '/internal/resolve', body, '');
    await expectRefused({ ...captured, payload: JSON.stringify({ tokenHash: 'b'.repeat(64) }) });
    expect((await app.inject(signed('POST', '/internal/resolve', body, ''))).statusCode).toBe(200);
  });
});

describe('a proof is good for one request', () => {
  it('refuses the same headers and the same body a second time', async () => {
    const captured = signed('PUT', '/api/callback-url', ours);
    expect((await app.inject(captured)).statusCode).toBe(200);
    await expectRefused(captured);
    expect(acted).toHaveLength(1);
  });

  it('refuses a replayed GET and a replayed body-less POST', async () => {
    for (const captured of [signed('GET', '/api/list'), signed('POST', '/api/rotate'), signed('POST', '/internal/resolve', '{}', '')]) {
      expect((await app.inject(captured)).statusCode).toBe(200);
      await expectRefused(captured);
    }
  });

  it('acts on exactly one of two copies sent at once', async () => {
    const captured = signed('PUT', '/api/callback-url', ours);
    const statuses = (await Promise.all([app.inject(captured), app.inject(captured)])).map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 401]);
    expect(acted).toHaveLength(1);
  });

  it('does not let a tampered copy spend the proof of the genuine request', async () => {
    const captured = signed('PUT', '/api/callback-url', ours);
    await expectRefused({ ...captured, payload: theirs });
    expect((await app.inject(captured)).statusCode).toBe(200);
  });

  it('accepts the same request signed again (a retry carries a proof of its own)', async () => {
    const requestId = randomUUID();
    for (let i = 0; i < 3; i++) {
      const headers = { ...signer.headers({ method: 'GET', path: '/api/list', merchantId: MERCHANT, requestId }) };
      expect((await app.inject({ method: 'GET', url: '/api/list', headers })).statusCode).toBe(200);
    }
  });
});
