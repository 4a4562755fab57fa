/**
 * Signing-secret rotation with overlap (README.md#operate-it, docs/api.md#signing-secret, docs/callbacks.md) across the real processes: during the
 * overlap every callback carries one `v1,` signature per live secret, so a receiver holding either
 * secret verifies it with the standardwebhooks library; after it, only the new secret verifies;
 * `--overlap 0` revokes the old one at once.
 */
import { startCallbackReceiver, type CallbackReceiver, type ReceivedCallback } from '@dw/testing';
import { verifies } from './support/signatures';
import { api, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let receiver: CallbackReceiver;
let merchant: Merchant;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  stack = await startStack('secret_rotation', { RATE_LIMIT_PER_SECOND: '1000' });
  merchant = stack.createMerchant('Rotating merchant');
  await api(stack, merchant.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/deposit` });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

let n = 0;
/** Creates a deposit and returns its deposit.pending callback as received. */
async function nextCallback(): Promise<ReceivedCallback> {
  const orderId = `rot-${++n}`;
  const res = await api(stack, merchant.apiToken)('POST', '/api/createDeposit', { amount: '1.00', currency: 'USD', orderId });
  expect(res.status).toBe(201);
  const [callback] = await receiver.waitFor(1, (r) => r.json?.data?.orderId === orderId);
  return callback!;
}


const rotate = (body: unknown) => api(stack, merchant.apiToken)('POST', '/api/rotateCallbackSecret', body);

describe('POST /api/rotateCallbackSecret through the gateway', () => {
  it('signs with both secrets during the overlap, so a receiver holding either one verifies', async () => {
    const original = merchant.callbackSigningSecret;
    expect(verifies(original, await nextCallback())).toBe(true);

    const res = await rotate({});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const rotated = res.json.callbackSigningSecret as string;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(original);

    const during = await nextCallback();
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(rotated, during)).toBe(true);
    expect(verifies(original, during)).toBe(true);
    merchant.callbackSigningSecret = rotated;
  });

  it('signs with the new secret only once the overlap has ended', async () => {
    const previous = merchant.callbackSigningSecret;
    const res = await rotate({ overlapSeconds: 2 });
    expect(res.status).toBe(200);
    const current = res.json.callbackSigningSecret as string;
    const during = await nextCallback();
    expect(verifies(previous, during) && verifies(current, during)).toBe(true);

    await new Promise((r) => setTimeout(r, 2500));
    const after = await nextCallback();
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(current, after)).toBe(true);
    expect(verifies(previous, after)).toBe(false);
    merchant.callbackSigningSecret = current;
  });

  it('answers 400 problem+json for an overlap out of range and changes nothing', async () => {
    for (const body of [{ overlapSeconds: -1 }, { overlapSeconds: 604_801 }, { overlapSeconds: 'a day' }, { other: 1 }]) {
      const res = await rotate(body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({ code: 'validation_failed', errors: expect.any(Array) });
    }
    expect(verifies(merchant.callbackSigningSecret, await nextCallback())).toBe(true);
  });

  it('takes a request with no body at all as {} (every field is optional), and the OpenAPI says its body may be left out', async () => {
    const previous = merchant.callbackSigningSecret;
    const res = await rotate(undefined);
    expect(res.status).toBe(200);
    const current = res.json.callbackSigningSecret as string;
    expect(current).toMatch(/^whsec_/);
    const during = await nextCallback(); // the default overlap: both sign
    expect(verifies(previous, during) && verifies(current, during)).toBe(true);
    merchant.callbackSigningSecret = current;
    // Declared JSON but empty is still refused.
    const empty = await api(stack, merchant.apiToken)('POST', '/api/rotateCallbackSecret', '', { 'content-type': 'application/json' });
    expect(empty.status).toBe(400);
    const doc = (await api(stack, undefined)('GET', '/openapi.json')).json;
    expect(doc.paths['/api/rotateCallbackSecret'].post.requestBody.required).toBe(false);
    expect(doc.paths['/api/createDeposit'].post.requestBody.required).toBe(true);
  });

  it('answers 401 without a valid token, and is in the OpenAPI document', async () => {
    expect((await api(stack, 'dwk_wrong')('POST', '/api/rotateCallbackSecret', {})).status).toBe(401);
    const doc = (await api(stack, undefined)('GET', '/openapi.json')).json;
    expect(doc.paths['/api/rotateCallbackSecret'].post.responses['200']).toBeDefined();
  });
});

describe('merchant:rotate-secret --overlap 0', () => {
  it('revokes the old secret at once: the next callback verifies only with the new one', async () => {
    const previous = merchant.callbackSigningSecret;
    const res = stack.cli(['dist/cli/merchant.js', 'rotate-secret', '--merchant', merchant.merchantId, '--overlap', '0']);
    expect(res.status).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toEqual({ merchantId: merchant.merchantId, apiToken: null, callbackSigningSecret: expect.stringMatching(/^whsec_/) });
    const after = await nextCallback();
    expect(verifies(printed.callbackSigningSecret, after)).toBe(true);
    expect(verifies(previous, after)).toBe(false);
  });

  it('keeps the old secret 24 h by default', async () => {
    const previous = JSON.parse(stack.cli(['dist/cli/merchant.js', 'rotate-secret', '--merchant', merchant.merchantId, '--overlap', '0']).stdout)
      .callbackSigningSecret as string;
    const res = stack.cli(['dist/cli/merchant.js', 'rotate-secret', '--merchant', merchant.merchantId]);
    expect(res.status).toBe(0);
    const current = JSON.parse(res.stdout).callbackSigningSecret as string;
    const during = await nextCallback();
    expect(verifies(current, during)).toBe(true);
    expect(verifies(previous, during)).toBe(true);
  });
});
