/**
 * /readyz when PostgreSQL black-holes packets (a dead host, a partition): the service leaves its
 * Service within seconds, not after TCP gives up, and comes back once the database answers again.
 */
import { startTcpProxy, type TcpProxy } from '@dw/testing';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app';
import type pg from 'pg';
import { createPool } from '@dw/db';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { INTERNAL_SECRET } from '../support/service';

/** The readiness check's own bound (2 s) plus room for a loaded machine. */
const READY_WITHIN_MS = 3_500;

let database: TestDatabase;
let proxy: TcpProxy;
let db: pg.Pool;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase('readiness');
  const url = new URL(database.url);
  proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  url.host = proxy.address;
  db = createPool(url.toString(), 2);
  app = buildApp({
    config: { adminToken: 'test-admin-token', sandboxSettleMs: 0, allowPrivateHosts: false, internalAuthSecrets: [INTERNAL_SECRET] },
    db,
    logger: pino({ level: 'silent' }),
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await db?.end().catch(() => undefined);
  await database?.drop();
});

async function readyz(): Promise<{ status: number; tookMs: number }> {
  const started = Date.now();
  const reply = await app.inject({ method: 'GET', url: '/readyz' });
  return { status: reply.statusCode, tookMs: Date.now() - started };
}

describe('GET /readyz while PostgreSQL black-holes packets', () => {
  it('answers 503 within seconds on held and on new connections, and 200 again once PostgreSQL answers', async () => {
    expect((await readyz()).status).toBe(200);
    proxy.blackHole();
    // The first probe waits on a connection that was open; the next ones on new connections that
    // are accepted and never answered (the pool has 2: the third probe waits for a free one).
    for (let probe = 0; probe < 3; probe++) {
      const { status, tookMs } = await readyz();
      expect(status).toBe(503);
      expect(tookMs).toBeLessThan(READY_WITHIN_MS);
    }
    proxy.restore();
    const deadline = Date.now() + 40_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await readyz()).status) !== 200) await new Promise((r) => setTimeout(r, 200));
    expect(status).toBe(200);
  }, 60_000);
});
