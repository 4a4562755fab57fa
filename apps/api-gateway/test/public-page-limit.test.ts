/**
 * The token-less pages, limited per client address (PUBLIC_LIMIT_PER_MINUTE): the gateway as built
 * for production (buildApp), with a limit of 3. The pages' own answers do not matter here (the ui
 * upstream points at a port nothing listens on, so /ui answers 503): only whether the limit let the
 * request through.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { isPublicPage, PUBLIC_IN_PROGRESS } from '../src/auth/public-page-limit';
import { upstream } from '../src/upstreams';
import { buildTestGateway } from './support/gateway';

let app: FastifyInstance;
beforeAll(async () => {
  app = await buildTestGateway({ publicLimitPerMinute: 3 });
});
afterAll(async () => app?.close());

const get = (url: string, remoteAddress: string) => app.inject({ method: 'GET', url, remoteAddress });

it('lets an address make PUBLIC_LIMIT_PER_MINUTE requests to the token-less pages, all of them together, then answers 429 with Retry-After', async () => {
  const first = [await get('/openapi.json', '10.0.0.1'), await get('/docs', '10.0.0.1'), await get('/ui/assets/app.js', '10.0.0.1')];
  expect(first.map((r) => r.statusCode === 429)).toEqual([false, false, false]);
  const over = await get('/ui', '10.0.0.1');
  expect(over.statusCode).toBe(429);
  expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(over.json()).toMatchObject({ status: 429, code: 'rate_limited' });
  // 3 a minute: the next token comes 20 s after the first was taken (19 once a second has passed since, on a loaded machine).
  expect(['19', '20']).toContain(over.headers['retry-after']);
});

it('keeps each address its own bucket, and never limits the probes or the merchant API', async () => {
  for (let i = 0; i < 4; i++) await get('/openapi.json', '10.0.0.2');
  expect((await get('/openapi.json', '10.0.0.2')).statusCode).toBe(429);
  expect((await get('/openapi.json', '10.0.0.3')).statusCode).toBe(200);
  expect((await get('/healthz', '10.0.0.2')).statusCode).toBe(200);
  // The merchant API has limits of its own: a request without a token is a 401, not this 429.
  expect((await get('/api/getBalance', '10.0.0.2')).statusCode).toBe(401);
});

it('names the token-less pages by their routes', () => {
  expect(['/openapi.json', '/docs', '/docs/static/*', '/ui', '/ui/', '/ui/assets/*'].map(isPublicPage)).toEqual([true, true, true, true, true, true]);
  expect(['/healthz', '/readyz', '/metrics', '/ui/viewTransaction', '/api/createDeposit', '/docsx', undefined].map(isPublicPage)).toEqual([false, false, false, false, false, false, false]);
});

it('sends /ui/ (with its query) to the page at /ui, a token-less page like it', async () => {
  const bare = await get('/ui/', '10.0.0.4');
  expect([bare.statusCode, bare.headers.location]).toEqual([301, '/ui']);
  const withQuery = await get('/ui/?lang=en', '10.0.0.4');
  expect([withQuery.statusCode, withQuery.headers.location]).toEqual([301, '/ui?lang=en']);
  // Never elsewhere: the target is this gateway's /ui, whatever the path or query says.
  const sneaky = await get('/ui/?//evil.example', '10.0.0.4');
  expect(sneaky.headers.location).toBe('/ui?//evil.example');
});

describe('token-less pages in progress at once (PUBLIC_IN_PROGRESS)', () => {
  let server: FastifyInstance;
  let hanging: http.Server;
  const held: http.ServerResponse[] = [];
  beforeAll(async () => {
    // The ui holds every answer until told: each /ui request stays in progress, as an unread one does.
    hanging = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    server = await buildTestGateway({ publicLimitPerMinute: 600, ui: upstream(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`, 10_000) });
  });
  afterAll(async () => {
    for (const res of held) res.end();
    await server?.close();
    hanging.close();
  });

  it('answers 429 beyond 8 of one address at once, keeps others served, and serves it again once one is over', async () => {
    const pending = Array.from({ length: PUBLIC_IN_PROGRESS.perKey }, () => getFrom(server, '/ui', '10.0.1.1'));
    while (held.length < PUBLIC_IN_PROGRESS.perKey) await new Promise((r) => setTimeout(r, 10));
    const over = await getFrom(server, '/ui', '10.0.1.1');
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    // Another address is not held back by it.
    const other = getFrom(server, '/ui', '10.0.1.2');
    while (held.length < PUBLIC_IN_PROGRESS.perKey + 1) await new Promise((r) => setTimeout(r, 10));
    held[0]!.writeHead(200, { 'content-type': 'text/html' }).end('ok');
    held.at(-1)!.writeHead(200, { 'content-type': 'text/html' }).end('ok');
    expect((await other).statusCode).toBe(200);
    expect((await pending[0]!).statusCode).toBe(200);
    const again = getFrom(server, '/ui', '10.0.1.1');
    while (held.length < PUBLIC_IN_PROGRESS.perKey + 2) await new Promise((r) => setTimeout(r, 10));
    held.at(-1)!.writeHead(200, { 'content-type': 'text/html' }).end('ok');
    expect((await again).statusCode).toBe(200);
  });
});

const getFrom = (server: FastifyInstance, url: string, remoteAddress: string) => server.inject({ method: 'GET', url, remoteAddress });
