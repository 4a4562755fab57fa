/**
 * The per-address limit on bad tokens (bad-token-limit.ts), through the gateway's hook over HTTP
 * (inject, one client address): lookups in flight count before they end, and a good token is never
 * refused because of the bad ones before it.
 */
import { randomBytes } from 'node:crypto';
import { apiTokenHash } from '@dw/contracts';
import type { FastifyInstance } from 'fastify';
import { SLOW_LANE_WAIT_MS } from '../../src/auth/bad-token-limit';
import { TokenResolver } from '../../src/auth/token-resolver';
import { buildTestGateway } from '../support/gateway';

const LIMIT = 5;
const token = () => `dwk_${randomBytes(32).toString('base64url')}`;
const GOOD = token();
const MERCHANT = '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01';

let gateway: FastifyInstance;
let lookups: number;

beforeEach(async () => {
  lookups = 0;
  // A lookup takes 50 ms, as one through transactions-svc may under load.
  const lookup = async (hash: string) => {
    lookups++;
    await new Promise((r) => setTimeout(r, 50));
    return hash === apiTokenHash(GOOD) ? MERCHANT : undefined;
  };
  gateway = await buildTestGateway({ resolver: new TokenResolver(lookup, 30_000), badTokenLimitPerMinute: LIMIT });
});
afterEach(() => gateway.close());

// /healthz is not guarded; /api/getBalance is (its upstream is nowhere: a good token gets 503 there).
const call = (t: string) => gateway.inject({ method: 'GET', url: '/api/getBalance', headers: { serviceapitoken: t } });

describe('bad tokens from one address', () => {
  it('counts lookups in flight: 50 unknown tokens at once make LIMIT lookups and one more in the slow lane, not 50', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(token())));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - LIMIT);
    expect(lookups).toBe(LIMIT + 1);
    for (const a of answers.filter((x) => x.statusCode === 429)) {
      expect(a.json()).toMatchObject({ status: 429, code: 'rate_limited', detail: expect.stringContaining('with a bad token from your address') });
      expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  it('never refuses a good token for the bad ones: past the limit it is looked up in the slow lane and served', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await call(token())).statusCode).toBe(401);
    expect((await call(token())).statusCode).toBe(429);
    expect((await call('not-even-a-token')).statusCode).toBe(429);
    const started = Date.now();
    const good = await call(GOOD);
    expect(good.statusCode).not.toBe(429);
    expect(good.statusCode).not.toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_LANE_WAIT_MS - 10);
    // Once known, it is served from the cache at once.
    const again = Date.now();
    expect((await call(GOOD)).statusCode).not.toBe(429);
    expect(Date.now() - again).toBeLessThan(SLOW_LANE_WAIT_MS);
  });

  it('gives a good token its place in the budget back: good tokens never use up the limit', async () => {
    const gateways = Array.from({ length: LIMIT * 3 }, () => call(GOOD));
    for (const a of await Promise.all(gateways)) expect([401, 429]).not.toContain(a.statusCode);
    for (let i = 0; i < LIMIT; i++) expect((await call(token())).statusCode).toBe(401);
  });
});
