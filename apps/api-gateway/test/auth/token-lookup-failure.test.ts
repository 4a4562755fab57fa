/**
 * A token the gateway must look up while transactions-svc cannot answer: 503 (never 401: the token
 * is not known to be bad), and one warning that says what failed, without a stack.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InternalAuth } from '@dw/http-kit';
import { createLogger } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import { TokenResolver } from '../../src/auth/token-resolver';
import { tokenLookupVia, upstream } from '../../src/upstreams';
import { buildTestGateway } from '../support/gateway';

const TOKEN = `dwk_${'a'.repeat(43)}`;
const internalAuth = new InternalAuth(['gateway-test-secret']);

async function listening(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A gateway whose token lookups go to `transactionsUrl`, and the lines it logs. */
async function gatewayLookingUpAt(transactionsUrl: string) {
  const lines: Record<string, unknown>[] = [];
  const transactions = upstream(transactionsUrl, 1_000);
  const app = await buildTestGateway({
    logger: createLogger('gateway-test', 'info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
    resolver: new TokenResolver(tokenLookupVia(transactions, internalAuth), 30_000),
    transactions,
  });
  return { app, lines };
}

async function lookUp(app: FastifyInstance, requestId: string) {
  return app.inject({ method: 'GET', url: '/api/getBalance', headers: { serviceapitoken: TOKEN, 'x-request-id': requestId } });
}

const warningsOf = (lines: Record<string, unknown>[], requestId: string) =>
  lines.filter((line) => line.request_id === requestId && (line.level as number) >= 40);

it('answers 503 when transactions-svc is not there, and logs the refused connection once, without a stack', async () => {
  const gone = http.createServer();
  const url = await listening(gone);
  await new Promise((resolve) => gone.close(resolve));
  const { app, lines } = await gatewayLookingUpAt(url);
  try {
    const res = await lookUp(app, 'lookup-down-1');
    expect([res.statusCode, res.json().code]).toEqual([503, 'service_unavailable']);
    const warnings = warningsOf(lines, 'lookup-down-1');
    expect(warnings).toEqual([expect.objectContaining({ level: 40, msg: 'upstream unavailable', error: expect.objectContaining({ code: 'ECONNREFUSED' }) })]);
    expect(JSON.stringify(warnings)).not.toContain('stack');
  } finally {
    await app.close();
  }
});

it('answers 503 when transactions-svc answers the lookup with an error, and logs what it answered', async () => {
  const failing = http.createServer((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"status":500}'));
  const { app, lines } = await gatewayLookingUpAt(await listening(failing));
  try {
    const res = await lookUp(app, 'lookup-500-1');
    expect([res.statusCode, res.json().code]).toEqual([503, 'service_unavailable']);
    expect(warningsOf(lines, 'lookup-500-1')).toEqual([
      expect.objectContaining({
        msg: 'upstream unavailable',
        error: { code: 'HTTP_500', message: 'transactions-svc answered 500: no merchant for the token lookup' },
      }),
    ]);
  } finally {
    await app.close();
    failing.close();
  }
});
