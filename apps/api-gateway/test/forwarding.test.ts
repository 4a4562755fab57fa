/**
 * What the gateway puts on the wire to an internal service: a proof of each request, body included,
 * that the service's own guard (libs/http-kit requireMerchant) accepts, and a proof of its own on
 * its one retry, since the guard accepts a proof once. It retries only a connection error, once;
 * never an answer, 503 included. The upstream is a real HTTP server.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createService, InternalAuth, requireMerchant } from '@dw/http-kit';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { TokenResolver } from '../src/auth/token-resolver';
import { upstream } from '../src/upstreams';
import { buildTestGateway } from './support/gateway';

const SECRET = 'forwarding-test-secret-0123456789abcdef';
const MERCHANT = '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01';
const TOKEN = `dwk_${randomBytes(32).toString('base64url')}`;

let service: FastifyInstance;
let gateway: FastifyInstance;
let seen: { proof: string; body: unknown }[];
let unavailableFirst = 0;
let hangUpFirst = 0;

beforeAll(async () => {
  service = createService({ logger: pino({ level: 'silent' }), readiness: {} });
  await service.register(async (scope) => {
    requireMerchant(scope, new InternalAuth([SECRET]));
    scope.get('/api/getCallbackUrls', async (request, reply) => {
      seen.push({ proof: String(request.headers['x-internal-auth']), body: undefined });
      if (hangUpFirst > 0) {
        hangUpFirst--;
        request.raw.socket.destroy(); // a connection error: no answer at all
        return reply;
      }
      if (unavailableFirst > 0) {
        unavailableFirst--;
        return reply.code(503).header('retry-after', '0').send({ status: 503, code: 'service_unavailable' });
      }
      return { depositCallbackUrl: null, withdrawCallbackUrl: null };
    });
    scope.put('/api/updateCallbackUrlDeposit', async (request) => {
      seen.push({ proof: String(request.headers['x-internal-auth']), body: request.body });
      return { depositCallbackUrl: (request.body as { url: string }).url, withdrawCallbackUrl: null };
    });
  });
  await service.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`;
  gateway = await buildTestGateway({
    resolver: new TokenResolver(async () => MERCHANT, 30_000),
    internalAuth: new InternalAuth([SECRET]),
    transactions: upstream(url, 5_000),
    ui: upstream(url, 5_000),
  });
});
beforeEach(() => {
  seen = [];
  unavailableFirst = 0;
  hangUpFirst = 0;
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

describe('forwarding to an internal service', () => {
  it('proves the body it forwards: the service acts on it', async () => {
    const res = await gateway.inject({
      method: 'PUT',
      url: '/api/updateCallbackUrlDeposit',
      headers: { serviceapitoken: TOKEN, 'content-type': 'application/json; charset=utf-8' },
      // Spelled with spaces: the gateway re-serialises it and signs what it sends.
      payload: '{ "url" : "https://merchant.example/cb" }',
    });
    expect(res.statusCode).toBe(200);
    expect(seen).toEqual([{ proof: expect.stringMatching(/^t=\d+,n=[\w-]{22},b=[0-9a-f]{64},v2=[0-9a-f]{64}$/), body: { url: 'https://merchant.example/cb' } }]);
  });

  it('never retries an answer: a 503 reaches the service once and the merchant gets 503', async () => {
    unavailableFirst = 2;
    const res = await gateway.inject({ method: 'GET', url: '/api/getCallbackUrls', headers: { serviceapitoken: TOKEN } });
    expect(res.statusCode).toBe(503);
    expect(seen).toHaveLength(1);
  });

  it('retries a GET once after a connection error, signed anew: the retry reaches the handler', async () => {
    hangUpFirst = 1;
    const res = await gateway.inject({ method: 'GET', url: '/api/getCallbackUrls', headers: { serviceapitoken: TOKEN } });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(2);
    expect(new Set(seen.map((s) => s.proof)).size).toBe(2);
  });

  it('retries a connection error only once: a second one answers 503', async () => {
    hangUpFirst = 5;
    const res = await gateway.inject({ method: 'GET', url: '/api/getCallbackUrls', headers: { serviceapitoken: TOKEN } });
    expect(res.statusCode).toBe(503);
    expect(seen).toHaveLength(2);
  });

  it('signs two identical requests with one x-request-id apart: both are acted on', async () => {
    const headers = { serviceapitoken: TOKEN, 'x-request-id': 'merchant-retry-1' };
    for (let i = 0; i < 2; i++) expect((await gateway.inject({ method: 'GET', url: '/api/getCallbackUrls', headers })).statusCode).toBe(200);
    expect(seen).toHaveLength(2);
  });
});
