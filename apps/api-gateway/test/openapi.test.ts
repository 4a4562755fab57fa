/**
 * /openapi.json of the gateway as built for production (buildApp): what it declares must be what
 * the service sends (docs/api.md#errors and the OpenAPI document). No request reaches an upstream: the document is the
 * gateway's own, so the upstreams point at a port nothing listens on.
 */
import type { FastifyInstance } from 'fastify';
import { buildTestGateway } from './support/gateway';

type Json = Record<string, any>;

let app: FastifyInstance;
let doc: Json;
beforeAll(async () => {
  app = await buildTestGateway();
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => app?.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function operations(): [string, Json][] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, Json] => [`${m.toUpperCase()} ${path}`, item[m]]),
  );
}

function responses(): [string, string, Json][] {
  return operations().flatMap(([op, operation]) => Object.entries(operation.responses as Json).map(([status, r]): [string, string, Json] => [op, status, r]));
}

/** Follows a local $ref (`#/components/headers/x`). */
function deref(value: Json): Json {
  if (typeof value?.$ref !== 'string') return value;
  const target = (value.$ref as string)
    .slice(2)
    .split('/')
    .reduce((node: any, token) => node?.[token.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  expect({ ref: value.$ref, resolved: target !== undefined }).toEqual({ ref: value.$ref, resolved: true });
  return target;
}

function headerOf(response: Json, name: string): Json | undefined {
  const entry = Object.entries((deref(response).headers ?? {}) as Json).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return entry && deref(entry[1]);
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document listing the merchant operations', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(operations().map(([op]) => op)).toEqual(expect.arrayContaining(['POST /api/createDeposit', 'POST /api/createWithdraw', 'GET /ui/viewTransaction']));
  });

  it('declares every error response (4XX, 5XX, 429) as application/problem+json, never application/json', () => {
    const errors = responses().filter(([, status]) => /^[45]/.test(status));
    expect(errors.length).toBeGreaterThan(0);
    for (const [op, status, response] of errors) {
      const content = deref(response).content as Json;
      const types = Object.keys(content ?? {});
      expect({ op, status, types }).toEqual({ op, status, types: expect.arrayContaining(['application/problem+json']) });
      expect({ op, status, types }).toEqual({ op, status, types: expect.not.arrayContaining(['application/json']) });
      expect(deref(content['application/problem+json'].schema)).toMatchObject({ required: expect.arrayContaining(['code', 'requestId']) });
    }
  });

  it('describes the callback as a webhook: its body, its Standard Webhooks headers, and 200 as the only success', () => {
    const callback = doc.webhooks?.transactionEvent?.post as Json;
    expect(callback).toBeDefined();
    expect(callback.parameters.map((p: Json) => [p.name, p.in, p.required])).toEqual([
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ]);
    const body = deref(callback.requestBody.content['application/json'].schema);
    expect(Object.keys(body.properties)).toEqual(['id', 'type', 'createdAt', 'sequence', 'data']);
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(body.properties.data.properties)).toEqual(expect.arrayContaining(['id', 'type', 'status', 'amount', 'currency', 'orderId']));
    expect(JSON.stringify(body)).not.toContain('$id');
    expect(Object.keys(callback.responses)).toEqual(['200', 'default']);
  });

  it('declares 4XX, 5XX and 429 on every operation', () => {
    for (const [op, operation] of operations()) {
      expect({ op, statuses: Object.keys(operation.responses) }).toEqual({ op, statuses: expect.arrayContaining(['4XX', '5XX', '429']) });
    }
  });

  it('declares each status an operation can answer, with the problem code it carries', () => {
    for (const [op, operation] of operations()) {
      const body = operation.requestBody ? ['413', '415'] : [];
      expect({ op, statuses: Object.keys(operation.responses) }).toEqual({ op, statuses: expect.arrayContaining(['400', '401', '429', '500', '503', ...body]) });
    }
    const statusesOf = (path: string, method = 'post') => Object.keys(doc.paths[path][method].responses);
    expect(statusesOf('/api/createDeposit')).toEqual(expect.arrayContaining(['409']));
    expect(statusesOf('/api/createWithdraw')).toEqual(expect.arrayContaining(['409', '422']));
    expect(statusesOf('/api/redeliverCallback')).toEqual(expect.arrayContaining(['404', '409']));
    expect(statusesOf('/ui/viewTransaction', 'get')).toEqual(expect.arrayContaining(['404']));
    expect(statusesOf('/api/createDeposit')).not.toContain('422');
    expect(statusesOf('/api/getBalance', 'get')).not.toContain('413');
    expect(doc.paths['/api/createWithdraw'].post.responses['422'].description).toMatch(/^insufficient_funds: /);
    expect(doc.paths['/api/getBalance'].get.responses['401'].description).toMatch(/^unauthorized: /);
  });

  it('declares x-request-id on every response, Retry-After on 429 and Idempotent-Replayed on the 200 of a create', () => {
    for (const [op, status, response] of responses()) {
      expect({ op, status, header: headerOf(response, 'x-request-id')?.schema }).toEqual({ op, status, header: { type: 'string' } });
    }
    for (const [op, operation] of operations()) {
      expect({ op, retryAfter: headerOf(operation.responses['429'], 'retry-after')?.schema }).toEqual({ op, retryAfter: expect.objectContaining({ type: 'integer' }) });
    }
    for (const op of ['/api/createDeposit', '/api/createWithdraw']) {
      const responses = doc.paths[op].post.responses;
      expect(headerOf(responses['200'], 'idempotent-replayed')?.schema).toEqual({ type: 'string', enum: ['true'] });
      expect(headerOf(responses['201'], 'idempotent-replayed')).toBeUndefined();
    }
  });
});
