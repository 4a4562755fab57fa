import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { getRawPath } from '@dw/testing';
import { createService, MAX_QUERY_PARAMETERS, nonCanonicalPath, queryParameterFault } from '../src';

/**
 * Each spelling that names another path once a URL parser has read it. The requests go over a real
 * socket: app.inject() parses the URL itself and would hand the server the normalised path.
 */
const REFUSED = [
  '/assets/x\\..\\..\\metrics',
  '/assets/x%5C..%5C..%5Cmetrics',
  '/assets/x%5c..%5cmetrics',
  '/assets/%2e%2e/%2E%2E/metrics',
  '/assets/..%2F..%2Fmetrics',
  '/assets/..%2f..%2fmetrics',
  '/assets/../../metrics',
  '/assets/./x',
  '/assets/.%2e/metrics',
  '/assets/%2e./metrics',
  '/assets/x/..',
  '/assets/x\\%2e%2e%2Fmetrics',
  '/assets/x%2Fy',
  '/assets/x#/../../metrics',
  '/assets/%c0%ae%c0%ae/metrics',
  'http://example.test/assets/..%2Fmetrics',
];

describe('canonical request paths', () => {
  const app = createService({ logger: pino({ level: 'silent' }), readiness: {} });
  const hits: string[] = [];
  app.get('/assets/*', async (req) => {
    hits.push(req.raw.url ?? '');
    return { asset: (req.params as { '*': string })['*'] };
  });
  let base = '';
  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  it.each(REFUSED)('refuses %s with 400 problem+json before any handler runs', async (target) => {
    const before = hits.length;
    const res = await getRawPath(base, target, { 'x-request-id': 'path-1' });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: 400, code: 'validation_failed', requestId: 'path-1' });
    expect(body.errors).toEqual([{ path: 'path', message: expect.any(String) }]);
    expect(res.body).not.toContain('# HELP');
    expect(hits.length).toBe(before);
  });

  it('serves canonical paths, an encoded dot inside a name and a query full of dots included', async () => {
    for (const [target, asset] of [
      ['/assets/app.js', 'app.js'],
      ['/assets/app%2ejs', 'app.js'],
      ['/assets/a..b', 'a..b'],
      ['/assets/x?next=../../metrics&p=%2F%5C', 'x'],
    ] as const) {
      const res = await getRawPath(base, target);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ asset });
    }
    expect((await getRawPath(base, '/metrics')).status).toBe(200);
  });

  it('states the reason for each kind of spelling', () => {
    expect(nonCanonicalPath('/a\\b')).toMatch(/"\\"/);
    expect(nonCanonicalPath('/a%5Cb')).toMatch(/encoded/);
    expect(nonCanonicalPath('/a/%2E%2e')).toMatch(/segment/);
    // Segments starting with "..": read as ".." by some servers ("..;"), refused as traversal by the proxy library.
    for (const path of ['/ui/assets/..;/metrics', '/ui/assets/....//x', '/ui/assets/...', '/a/%2E%2E%3B/b']) expect(nonCanonicalPath(path)).toMatch(/segment/);
    expect(nonCanonicalPath('/a/%zz')).toMatch(/percent-encoding/);
    expect(nonCanonicalPath('*')).toMatch(/absolute path/);
    expect(nonCanonicalPath('/api/createDeposit?x=..')).toBeUndefined();
  });

  it('reads a well-formed query, "+" as a space and %25 as a literal "%", and an empty or bare parameter', () => {
    for (const url of ['/a?orderId=50%25off', '/a?q=a+b&r=%F0%9F%98%80', '/a?', '/a?flag', '/a?x=&&y', '/a']) {
      expect(queryParameterFault(url)).toBeUndefined();
    }
  });

  it('refuses a query string of more than MAX_QUERY_PARAMETERS parameters as a whole, before judging each', () => {
    const query = (n: number) => `/a?${Array.from({ length: n }, (_, i) => `p${i}=${i}`).join('&')}`;
    expect(queryParameterFault(query(MAX_QUERY_PARAMETERS))).toBeUndefined();
    expect(queryParameterFault(query(MAX_QUERY_PARAMETERS + 1))).toEqual({ path: 'querystring', message: `must hold at most ${MAX_QUERY_PARAMETERS} parameters` });
  });

  it('names a parameter given twice, however it is spelt', () => {
    for (const url of ['/a?limit=10&limit=100', '/a?limit=1&x=2&limit', '/a?limit=1&%6Cimit=2', '/a?limit=1&lim%69t=1']) {
      expect(queryParameterFault(url)).toEqual({ path: 'querystring:/limit', message: 'must be given once' });
    }
    expect(queryParameterFault('/a?a%2Fb=1&a/b=2')).toEqual({ path: 'querystring:/a~1b', message: 'must be given once' });
  });
});

describe('query parameters that are not valid percent-encoding', () => {
  const app = createService({ logger: pino({ level: 'silent' }), readiness: {} });
  const seen: unknown[] = [];
  app.register(async (scope) => {
    // Stands for the gateway's authentication: an onRequest hook of the app's own.
    scope.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-token'] !== 'ok') return reply.code(401).send({ code: 'unauthorized' });
    });
    scope.get('/list', { schema: { querystring: { type: 'object', additionalProperties: false, properties: { orderId: { type: 'string' }, limit: { type: 'string' }, 'a/b': { type: 'string' } } } } }, async (req) => {
      seen.push(req.query);
      return { query: req.query };
    });
    scope.post('/create', async (req) => {
      seen.push(req.query);
      return { created: true };
    });
  });
  let base = '';
  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  const percentEncoding = expect.stringMatching(/percent-encoding/);
  it.each([
    ['/list?orderId=%E0%A4%A', 'querystring:/orderId', percentEncoding],
    ['/list?orderId=%ED%A0%80', 'querystring:/orderId', percentEncoding],
    ['/list?limit=5&orderId=50%off', 'querystring:/orderId', percentEncoding],
    ['/list?a%2Fb=%', 'querystring:/a~1b', percentEncoding],
    ['/list?%ZZ=1', 'querystring', percentEncoding],
    ['/list?limit=10&limit=100', 'querystring:/limit', 'must be given once'],
    ['/list?orderId=a&orderId=b', 'querystring:/orderId', 'must be given once'],
  ])('on a route that reads its query, %s is a 400 naming the parameter, and the handler never runs', async (target, path, message) => {
    const before = seen.length;
    const res = await getRawPath(base, target, { 'x-token': 'ok' });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(body.errors).toEqual([{ path, message }]);
    expect(body.detail).toMatch(/^Fix the (query parameter|query string)/);
    expect(seen.length).toBe(before);
  });

  it('comes after the app\'s own onRequest hooks: without the token the answer is their 401', async () => {
    const res = await getRawPath(base, '/list?orderId=%E0%A4%A');
    expect(res.status).toBe(401);
  });

  it('serves a well-formed query as it decodes, and leaves the query of a route that reads none alone', async () => {
    const ok = await getRawPath(base, '/list?orderId=50%25off+now', { 'x-token': 'ok' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ query: { orderId: '50%off now' } });
    const res = await fetch(`${base}/create?x=%E0%A4%A`, { method: 'POST', headers: { 'x-token': 'ok' } });
    expect(res.status).toBe(200);
  });
});
