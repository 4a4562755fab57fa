/** A transactions-svc instance on its own fresh database, with one or two merchants, for route tests. */
import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import pino from 'pino';
import { InternalAuth } from '@dw/http-kit';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type pg from 'pg';
import { buildApp, type AppDeps } from '../../src/app';
import { createPool } from '../../src/db/pool';
import { createPrisma } from '../../src/db/prisma';
import type { PrismaClient } from '../../src/generated/prisma/client';
import { createTestDatabase } from './database';

export const ADMIN_TOKEN = 'test-admin-token';
/** The internal secret the test instance verifies with; `as` signs with it, as the gateway does. */
export const INTERNAL_SECRET = 'test-internal-auth-secret-0123456789abcdef';
export const internalAuth = new InternalAuth([INTERNAL_SECRET]);

/**
 * inject options carrying the gateway's proof for this merchant: the path is signed with its query,
 * and an object payload is sent as the JSON text the proof's digest covers, as the gateway does.
 */
export function asGateway(merchantId: string, opts: InjectOptions): InjectOptions {
  const path = typeof opts.url === 'string' ? opts.url : String(opts.url);
  // What light-my-request sends: nothing for a falsy payload, a string or Buffer as it is, JSON otherwise.
  const { payload } = opts;
  const asJson = Boolean(payload) && typeof payload !== 'string' && !Buffer.isBuffer(payload);
  const body = !payload ? undefined : asJson ? JSON.stringify(payload) : (payload as string | Buffer);
  const proof = internalAuth.headers({ method: opts.method ?? 'GET', path, merchantId, requestId: randomUUID(), body });
  return {
    ...opts,
    ...(body === undefined ? {} : { payload: body }),
    headers: { ...proof, ...(asJson ? { 'content-type': 'application/json' } : {}), ...(opts.headers ?? {}) },
  };
}

export interface TestService {
  app: FastifyInstance;
  /** The pool the service runs its queries on. */
  pool: pg.Pool;
  /** A Prisma client of the test's own, to set up and inspect rows; the service never uses it. */
  db: PrismaClient;
  url: string;
  merchantA: string;
  merchantB: string;
  /** inject as a merchant, with the proof the gateway adds */
  as(merchantId: string, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * The test service's merchants A and B may withdraw up to this much without funds (a credit
 * limit), so tests of other rules can create withdraws; the ledger's tests make merchants of their own.
 */
export const TEST_CREDIT_LIMIT = '1000000000000000000000000000000';

export async function insertMerchant(db: PrismaClient, name = 'Test merchant', creditLimit = '0'): Promise<string> {
  const id = randomUUID();
  await db.merchant.create({
    data: {
      id,
      name,
      creditLimit,
      apiTokenHash: createHash('sha256').update(randomUUID()).digest('hex'),
      callbackSigningSecret: 'whsec_dGVzdA==',
    },
  });
  return id;
}

export async function startTestService(
  label: string,
  config: Partial<AppDeps['config']> = {},
): Promise<TestService> {
  const database = await createTestDatabase(label);
  const pool = createPool(database.url, 5);
  const db = createPrisma(database.url, 2);
  const app = buildApp({
    config: { adminToken: ADMIN_TOKEN, sandboxSettleMs: 0, allowPrivateHosts: false, internalAuthSecrets: [INTERNAL_SECRET], ...config },
    db: pool,
    logger: pino({ level: 'silent' }),
  });
  await app.ready();
  const merchantA = await insertMerchant(db, 'A', TEST_CREDIT_LIMIT);
  const merchantB = await insertMerchant(db, 'B', TEST_CREDIT_LIMIT);
  return {
    app,
    pool,
    db,
    url: database.url,
    merchantA,
    merchantB,
    as: (merchantId, opts) => app.inject(asGateway(merchantId, opts)),
    async close() {
      await app.close();
      await pool.end();
      await db.$disconnect();
      await database.drop();
    },
  };
}

/** Rows a create may write: used to prove that refused input changes nothing. */
export async function rowCounts(db: PrismaClient) {
  const [row] = await db.$queryRaw<{ tx: bigint; ev: bigint; ob: bigint; dl: bigint; le: bigint }[]>`
    SELECT (SELECT count(*) FROM transactions) AS tx, (SELECT count(*) FROM transaction_events) AS ev,
           (SELECT count(*) FROM outbox) AS ob, (SELECT count(*) FROM callback_deliveries) AS dl,
           (SELECT count(*) FROM ledger_entries) AS le`;
  return { tx: Number(row!.tx), ev: Number(row!.ev), ob: Number(row!.ob), dl: Number(row!.dl), le: Number(row!.le) };
}
