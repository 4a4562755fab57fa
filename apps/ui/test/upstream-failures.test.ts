/** transactions-svc unreachable, slow or talking nonsense: 503, never a crash or a 500. */
import type { FastifyInstance } from 'fastify';
import { deadAddress, startFakeTransactionsSvc, type FakeTransactionsSvc } from './support/fake-transactions-svc';
import { DETAIL, MERCHANT_ID } from './support/fixtures';
import { startUi } from './support/ui-app';

const headers = { 'x-merchant-id': MERCHANT_ID };

/** The warn lines the ui wrote for one request: what failed, named once, without a stack. */
const unavailableLines = (lines: Record<string, unknown>[], requestId: string) =>
  lines.filter((line) => line.request_id === requestId && line.msg === 'upstream unavailable');

describe('when transactions-svc is down', () => {
  let ui: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    ui = await startUi(await deadAddress(), 2000, lines);
  });
  afterAll(async () => {
    await ui?.close();
  });

  it.each([
    ['the list', ''],
    ['one transaction', `?id=${DETAIL.transaction.id}`],
  ])('answers 503 problem+json for %s, and logs one warning naming the cause', async (name, query) => {
    const requestId = `down-${name.replace(/ /g, '-')}`;
    const res = await ui.inject({ method: 'GET', url: `/ui/viewTransaction${query}`, headers: { ...headers, 'x-request-id': requestId } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(unavailableLines(lines, requestId)).toEqual([
      expect.objectContaining({ level: 40, error: expect.objectContaining({ code: 'ECONNREFUSED' }) }),
    ]);
    expect(JSON.stringify(unavailableLines(lines, requestId))).not.toContain('stack');
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
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    upstream = await startFakeTransactionsSvc();
    ui = await startUi(upstream.url, 300, lines);
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

  it('answers 503 when transactions-svc replies with something that is not JSON, and logs what it answered', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=not-json', headers: { ...headers, 'x-request-id': 'not-json-1' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
    expect(unavailableLines(lines, 'not-json-1')).toEqual([
      expect.objectContaining({ level: 40, error: { code: 'HTTP_200', message: 'transactions-svc answered 200: not a JSON object or a problem' } }),
    ]);
  });

  it('answers 503 when the JSON of a 200 from transactions-svc ends short of its object', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=cut-short', headers });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
  });

  it('answers 503 when transactions-svc does not reply within UPSTREAM_TIMEOUT_MS, and logs the timeout', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui/viewTransaction?orderId=slow', headers: { ...headers, 'x-request-id': 'slow-1' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable' });
    expect(unavailableLines(lines, 'slow-1')).toEqual([expect.objectContaining({ level: 40, error: { code: 'DW_UPSTREAM_DEADLINE', message: 'no answer from the upstream within 300 ms (queue included)' } })]);
  });
});
