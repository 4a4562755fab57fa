/** transactions-svc unreachable, slow or talking nonsense: 503, never a crash or a 500. */
import type { FastifyInstance } from 'fastify';
import { deadAddress, startFakeTransactionsSvc, type FakeTransactionsSvc } from './support/fake-transactions-svc';
import { DETAIL, MERCHANT_ID } from './support/fixtures';
import { startUi } from './support/ui-app';

const headers = { 'x-merchant-id': MERCHANT_ID };

describe('when transactions-svc is down', () => {
  let ui: FastifyInstance;
  beforeAll(async () => {
    ui = await startUi(await deadAddress());
  });
  afterAll(async () => {
    await ui?.close();
  });

  it.each([
    ['the list', ''],
    ['one transaction', `?id=${DETAIL.transaction.id}`],
  ])('answers 503 problem+json for %s', async (_name, query) => {
    const res = await ui.inject({ method: 'GET', url: `/ui/viewTransaction${query}`, headers });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('answers an HTML request with the same 503 problem+json', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction', headers: { ...headers, accept: 'text/html' } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('is not ready (/readyz 503) but alive (/healthz 200)', async () => {
    const ready = await ui.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ code: 'service_unavailable' });
    const alive = await ui.inject({ method: 'GET', url: '/healthz' });
    expect(alive.statusCode).toBe(200);
  });

  it('still serves the interactive page, which needs no data', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(200);
  });
});

describe('when transactions-svc is up', () => {
  let upstream: FakeTransactionsSvc;
  let ui: FastifyInstance;
  beforeAll(async () => {
    upstream = await startFakeTransactionsSvc();
    ui = await startUi(upstream.url, 300);
  });
  afterAll(async () => {
    await ui?.close();
    await upstream?.close();
  });

  it('is ready (/readyz 200) and serves /metrics in Prometheus text', async () => {
    const ready = await ui.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    const metrics = await ui.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.body).toContain('# TYPE');
  });

  it('answers 503 when transactions-svc replies with something that is not JSON', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=not-json', headers });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
  });

  it('answers 503 when the JSON of a 200 from transactions-svc ends short of its object', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=cut-short', headers });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
  });

  it('answers 503 when transactions-svc does not reply within UPSTREAM_TIMEOUT_MS', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=slow', headers });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
  });
});
