/**
 * Only the gateway speaks for a merchant (docs/api.md#processes-and-health): transactions-svc acts for the merchant in
 * x-merchant-id only with a fresh x-internal-auth proof of that very request, and token resolution
 * answers only such a caller. Anyone else gets 401 and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { InternalAuth } from '@dw/http-kit';
import { asGateway, INTERNAL_SECRET, rowCounts, startTestService, type TestService } from '../support/service';

let svc: TestService;
let rotating: TestService;
const NEW_SECRET = 'the-next-internal-secret-abcdefghijklmnop';
beforeAll(async () => {
  svc = await startTestService('gwonly');
  // Mid-rotation: signs with the new secret, still accepts the old one.
  rotating = await startTestService('gwonly-rot', { internalAuthSecrets: [NEW_SECRET, INTERNAL_SECRET] });
});
afterAll(async () => {
  await svc?.close();
  await rotating?.close();
});

const deposit = { amount: '10', currency: 'USD', orderId: 'forged-1' };
const createOpts = { method: 'POST' as const, url: '/api/createDeposit', payload: deposit };

function signedBy(secret: string, merchantId: string, opts: { method: string; url: string; payload?: object }, at = Date.now()) {
  const auth = new InternalAuth([secret], () => at);
  const body = opts.payload === undefined ? undefined : JSON.stringify(opts.payload);
  return auth.headers({ method: opts.method, path: opts.url, merchantId, requestId: randomUUID(), body });
}

describe('merchant routes refuse a caller that is not the gateway', () => {
  it.each([
    ['no proof at all', () => ({ 'x-merchant-id': svc.merchantA })],
    ['a proof signed with another secret', () => signedBy('an-attacker-guess-0123456789abcdefghij', svc.merchantA, createOpts)],
    ['a proof older than the freshness window', () => signedBy(INTERNAL_SECRET, svc.merchantA, createOpts, Date.now() - 120_000)],
    ['a proof from the future', () => signedBy(INTERNAL_SECRET, svc.merchantA, createOpts, Date.now() + 120_000)],
    ['a garbled proof', () => ({ 'x-merchant-id': svc.merchantA, 'x-internal-auth': 't=1,v1=zz' })],
  ])('answers 401 problem+json to a forged x-merchant-id with %s, and creates nothing', async (_name, headers) => {
    const before = await rowCounts(svc.db);
    const res = await svc.app.inject({ ...createOpts, headers: headers() });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await rowCounts(svc.db)).toEqual(before);
  });

  it("refuses a genuine proof presented with another merchant's id", async () => {
    const proof = signedBy(INTERNAL_SECRET, svc.merchantA, createOpts);
    const res = await svc.app.inject({ ...createOpts, headers: { ...proof, 'x-merchant-id': svc.merchantB } });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a genuine proof replayed for another method or path', async () => {
    const proof = signedBy(INTERNAL_SECRET, svc.merchantA, { method: 'GET', url: '/api/getCallbackUrls' });
    const put = await svc.app.inject({
      method: 'PUT',
      url: '/api/updateCallbackUrlDeposit',
      payload: { url: 'https://93.184.216.34/x' },
      headers: proof,
    });
    expect(put.statusCode).toBe(401);
    expect((await svc.as(svc.merchantA, { method: 'GET', url: '/api/getCallbackUrls' })).json().depositCallbackUrl).toBeNull();
    const otherQuery = await svc.app.inject({ method: 'GET', url: '/api/getCallbackUrls?x=1', headers: proof });
    expect(otherQuery.statusCode).toBe(401);
  });

  it("refuses a genuine proof replayed under another request id", async () => {
    const proof = signedBy(INTERNAL_SECRET, svc.merchantA, createOpts);
    const res = await svc.app.inject({ ...createOpts, headers: { ...proof, 'x-request-id': randomUUID() } });
    expect(res.statusCode).toBe(401);
  });

  it('acts for the merchant on a fresh proof of exactly this request', async () => {
    const res = await svc.app.inject(asGateway(svc.merchantA, { ...createOpts, payload: { ...deposit, orderId: 'genuine-1' } }));
    expect(res.statusCode).toBe(201);
  });
});

describe('a captured proof is good for exactly the request it was made for, once', () => {
  const withdraw = { method: 'POST' as const, url: '/api/createWithdraw' };
  const genuine = JSON.stringify({ amount: '10.00', currency: 'USD', orderId: 'captured-1', destination: 'merchant-iban' });

  function captured(body: string) {
    const proof = signedBy(INTERNAL_SECRET, svc.merchantA, { ...withdraw, payload: JSON.parse(body) });
    return { ...withdraw, payload: body, headers: { ...proof, 'content-type': 'application/json' } };
  }

  it('refuses the same headers with another body (401, as any failed proof) and creates nothing', async () => {
    const request = captured(genuine);
    const before = await rowCounts(svc.db);
    const forged = JSON.stringify({ amount: '9999.00', currency: 'USD', orderId: 'captured-2', destination: 'attacker-iban' });
    const res = await svc.app.inject({ ...request, payload: forged });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await rowCounts(svc.db)).toEqual(before);
    // The genuine request, arriving after the forgery, is still acted on.
    expect((await svc.app.inject(request)).statusCode).toBe(201);
  });

  it('refuses the same headers and body sent again, and changes nothing', async () => {
    const put = { method: 'PUT' as const, url: '/api/updateCallbackUrlWithdraw', payload: { url: 'https://93.184.216.34/merchant' } };
    const proof = signedBy(INTERNAL_SECRET, svc.merchantB, put);
    const request = { ...put, payload: JSON.stringify(put.payload), headers: { ...proof, 'content-type': 'application/json' } };
    expect((await svc.app.inject(request)).statusCode).toBe(200);
    const replayed = await svc.app.inject(request);
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json()).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});

describe('rotating INTERNAL_AUTH_SECRETS without downtime', () => {
  it('accepts proofs signed with every configured secret, and no other', async () => {
    const get = { method: 'GET', url: '/api/getCallbackUrls' };
    for (const secret of [NEW_SECRET, INTERNAL_SECRET]) {
      const res = await rotating.app.inject({ ...get, headers: signedBy(secret, rotating.merchantA, get) } as never);
      expect(res.statusCode).toBe(200);
    }
    const stranger = signedBy('a-secret-nobody-configured-0123456789ab', rotating.merchantA, get);
    expect((await rotating.app.inject({ ...get, headers: stranger } as never)).statusCode).toBe(401);
  });
});

describe('POST /internal/auth/resolve', () => {
  const resolve = { method: 'POST' as const, url: '/internal/auth/resolve', payload: { tokenHash: 'a'.repeat(64) } };

  it('answers 401 to a caller without the proof, before looking anything up', async () => {
    const res = await svc.app.inject(resolve);
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthorized');
  });

  it('answers 401 to a proof that names a merchant (resolution acts for none)', async () => {
    const res = await svc.app.inject(asGateway(svc.merchantA, resolve));
    expect(res.statusCode).toBe(401);
  });

  it("answers the gateway's proven request (404 for an unknown hash)", async () => {
    const auth = new InternalAuth([INTERNAL_SECRET]);
    const body = JSON.stringify(resolve.payload);
    const res = await svc.app.inject({
      ...resolve,
      payload: body,
      headers: { 'content-type': 'application/json', ...auth.headers({ method: 'POST', path: resolve.url, merchantId: '', requestId: randomUUID(), body }) },
    });
    expect(res.statusCode).toBe(404);
  });
});

describe('what needs no proof', () => {
  it.each(['/healthz', '/readyz', '/metrics'])('%s', async (url) => {
    expect((await svc.app.inject({ method: 'GET', url })).statusCode).toBe(200);
  });

  it('the operator API keeps its own admin token', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: `/internal/transactions/${randomUUID()}/status`,
      payload: { status: 'completed' },
      headers: { 'x-admin-token': 'test-admin-token' },
    });
    expect(res.statusCode).toBe(404);
  });
});
