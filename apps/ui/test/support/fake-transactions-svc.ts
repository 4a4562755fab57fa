/**
 * A real HTTP server on 127.0.0.1 playing transactions-svc's merchant endpoints with fixed
 * data, so the ui service is tested over the network exactly as it runs, without a database.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { InternalAuth } from '@dw/http-kit';
import { BALANCES, DETAIL, EXPORT_ROWS, HEALTH, HISTORY_ONE, INTERNAL_SECRET, MANY_ATTEMPTS, MERCHANT_ID, PAGE_ONE, PAGE_TWO } from './fixtures';

/** A page written as no JSON.stringify would write it: a reader that parses and writes again changes it. */
export const AS_WRITTEN = '{ "items": [],\n  "nextCursor": null, "amount": "1.10", "note": "\\u00e9" }\n';

// Like the real one, it believes x-merchant-id only with the caller's proof of the request.
const internalAuth = new InternalAuth([INTERNAL_SECRET]);

export interface RecordedCall {
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeTransactionsSvc {
  url: string;
  calls: RecordedCall[];
  close(): Promise<void>;
}

function problem(status: number, code: string, detail: string, requestId: unknown, errors?: unknown[]) {
  return { type: `https://example.test/${code}`, title: code, status, detail, code, requestId: String(requestId), ...(errors ? { errors } : {}) };
}

function routes(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/healthz') return;
    const proven = internalAuth.verify(request.headers['x-internal-auth'], {
      method: request.method,
      path: request.url,
      merchantId: String(request.headers['x-merchant-id']),
      requestId: String(request.headers['x-request-id']),
    });
    if (!proven || request.headers['x-merchant-id'] !== MERCHANT_ID) {
      return reply.code(401).type('application/problem+json').send(problem(401, 'unauthorized', 'no merchant', request.headers['x-request-id']));
    }
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get<{ Querystring: Record<string, string> }>('/api/transactions', async (request, reply) => {
    const { cursor, orderId } = request.query;
    if (orderId === 'not-json') return reply.type('application/json').send('this is not json');
    if (orderId === 'cut-short') return reply.type('application/json').send('{"items":[{"id":"7b0c');
    if (orderId === 'as-written') return reply.type('application/json').send(AS_WRITTEN);
    if (orderId === 'slow') await new Promise((r) => setTimeout(r, 1500));
    if (cursor === 'bad') {
      return reply
        .code(400)
        .type('application/problem+json')
        .send(problem(400, 'validation_failed', 'bad cursor', request.headers['x-request-id'], [
          { path: 'querystring:/cursor', message: 'is not a cursor this API issued' },
        ]));
    }
    return cursor === PAGE_ONE.nextCursor ? PAGE_TWO : PAGE_ONE;
  });
  app.get('/api/endpoint-health', async () => HEALTH);
  app.get('/api/getBalance', async () => BALANCES);
  app.get<{ Querystring: Record<string, string> }>('/api/getBalanceHistory', async (request) =>
    request.query.cursor === HISTORY_ONE.nextCursor ? { items: [], nextCursor: null } : HISTORY_ONE,
  );
  app.get<{ Querystring: Record<string, string> }>('/api/transactions/export', async (request, reply) => {
    if (request.query.type === 'refund') {
      return reply.code(400).type('application/problem+json').send(problem(400, 'validation_failed', 'bad type', request.headers['x-request-id'], [{ path: 'querystring:/type', message: 'must be deposit or withdraw' }]));
    }
    const rows = request.query.type ? EXPORT_ROWS.filter((r) => r.transaction.type === request.query.type) : EXPORT_ROWS;
    return reply.type('application/x-ndjson').send(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  });
  app.get<{ Params: { id: string } }>('/api/transactions/:id', async (request, reply) => {
    if (request.params.id === DETAIL.transaction.id) return DETAIL;
    if (request.params.id === MANY_ATTEMPTS.transaction.id) return MANY_ATTEMPTS;
    return reply
      .code(404)
      .type('application/problem+json')
      .send(problem(404, 'not_found', 'No transaction with this id.', request.headers['x-request-id']));
  });
}

export async function startFakeTransactionsSvc(): Promise<FakeTransactionsSvc> {
  const app = Fastify();
  const calls: RecordedCall[] = [];
  app.addHook('onRequest', async (request) => {
    calls.push({ url: request.url, headers: { ...request.headers } });
  });
  routes(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls, close: () => app.close() };
}

/** An address where nothing listens: a server is started, its port noted, and it is closed. */
export async function deadAddress(): Promise<string> {
  const app = Fastify();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  await app.close();
  return `http://127.0.0.1:${port}`;
}
