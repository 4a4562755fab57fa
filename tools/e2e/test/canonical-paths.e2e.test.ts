/**
 * A request path is routed only in its canonical form (docs/api.md#request-paths). Seen before the
 * rule: `GET /ui/assets/x\..\..\..\metrics` through the gateway, no token, answered 200 with the
 * ui's Prometheus metrics (the gateway matched `/ui/assets/*` on the raw path, then the URL parser
 * of its proxy read `\` as `/` and resolved the dot segments). Every spelling is sent byte for byte
 * (node:http, no URL parsing) to the real gateway, and to the ui and transactions-svc behind it.
 */
import { getRawPath } from '@dw/testing';
import { api, startStack, type Stack } from './support/stack';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('canonical-paths');
});
afterAll(() => stack?.close());

/** Ways to climb three segments up from a path and name `target`, one per spelling and mixed. */
function climbs(target: string): string[] {
  return [
    `\\..\\..\\..\\${target}`,
    `%5C..%5C..%5C..%5C${target}`,
    `%5c..%5c..%5c..%5c${target}`,
    `/%2e%2e/%2e%2e/%2e%2e/${target}`,
    `/%2E%2E/%2E%2E/%2E%2E/${target}`,
    `/..%2F..%2F..%2F${target}`,
    `/..%2f..%2f..%2f${target}`,
    `/../../../${target}`,
    `/.%2e/%2e./.%2E/${target}`,
    `\\%2e%2e/..%2F.%2E%5C${target}`,
    `/.\\..%5c%2e%2e/../${target}`,
  ];
}

async function expectRefused(base: string, target: string, headers: Record<string, string> = {}) {
  const res = await getRawPath(base, target, headers);
  expect({ target, status: res.status }).toEqual({ target, status: 400 });
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ path: 'path' }] });
  expect(res.body).not.toContain('# HELP');
}

describe('request paths through the gateway', () => {
  it.each(['metrics', 'readyz', 'healthz', 'ui/viewTransaction', 'api/getCallbackUrls'])(
    'refuses every spelling that climbs from /ui/assets/ to %s with 400, token or not',
    async (target) => {
      const m = stack.createMerchant('Paths');
      for (const climb of climbs(target)) {
        await expectRefused(stack.gateway, `/ui/assets/x${climb}`);
        await expectRefused(stack.gateway, `/ui/assets/x${climb}`, { serviceApiToken: m.apiToken });
      }
    },
  );

  it('refuses the same spellings under the merchant API, before authentication', async () => {
    for (const climb of climbs('internal/transactions/00000000-0000-0000-0000-000000000000/status')) {
      await expectRefused(stack.gateway, `/api/getCallbackUrls${climb}`);
    }
    await expectRefused(stack.gateway, '/api%2FgetCallbackUrls');
    await expectRefused(stack.gateway, '/ui%5CviewTransaction');
  });

  it('still serves canonical paths, and an encoded character as what it decodes to', async () => {
    expect((await getRawPath(stack.gateway, '/ui/assets/app.js')).status).toBe(200);
    const encoded = await getRawPath(stack.gateway, '/ui/assets/app%2ejs');
    expect(encoded.status).toBe(200);
    expect(encoded.headers['content-type']).toMatch(/javascript/);
    const m = stack.createMerchant('Canonical');
    expect((await api(stack, m.apiToken)('GET', '/api/getCallbackUrls')).status).toBe(200);
    const page = await getRawPath(stack.gateway, '/ui/viewTransaction?limit=1&orderId=..%2F..%5Cx', { serviceApiToken: m.apiToken, accept: 'application/json' });
    expect(page.status).toBe(200);
  });
});

describe('request paths sent straight to the services behind it', () => {
  it('the ui refuses every spelling from its asset route', async () => {
    const ui = `http://127.0.0.1:${stack.ports.ui}`;
    for (const target of ['metrics', 'ui/viewTransaction', 'ui/endpointHealth']) {
      for (const climb of climbs(target)) await expectRefused(ui, `/ui/assets/x${climb}`);
    }
    expect((await getRawPath(ui, '/ui/assets/app.js')).status).toBe(200);
  });

  it('transactions-svc refuses every spelling from its parameter routes', async () => {
    for (const target of ['metrics', 'api/transactions/export', 'internal/auth/resolve']) {
      for (const climb of climbs(target)) {
        await expectRefused(stack.transactions, `/api/transactions/x${climb}`);
        await expectRefused(stack.transactions, `/internal/transactions/x${climb}/status`);
      }
    }
    expect((await getRawPath(stack.transactions, '/healthz')).status).toBe(200);
  });
});
