/**
 * The gateway as built for production (buildApp), with what a test does not set filled in: silent
 * logs, no merchant behind any token, limits no test reaches, and upstreams at a port nothing
 * listens on (built only when the test names none).
 */
import { InternalAuth } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp, type GatewayDeps } from '../../src/app';
import { MemoryRateLimiter } from '../../src/auth/rate-limiter';
import { TokenResolver } from '../../src/auth/token-resolver';
import { upstream } from '../../src/upstreams';

const NOWHERE = 'http://127.0.0.1:9';

export function buildTestGateway(deps: Partial<GatewayDeps> = {}): Promise<FastifyInstance> {
  return buildApp({
    logger: pino({ level: 'silent' }),
    resolver: new TokenResolver(async () => undefined, 30_000),
    limiter: new MemoryRateLimiter(1000),
    badTokenLimitPerMinute: 60,
    publicLimitPerMinute: 600,
    internalAuth: new InternalAuth(['gateway-test-secret']),
    ...deps,
    transactions: deps.transactions ?? upstream(NOWHERE, 1_000),
    ui: deps.ui ?? upstream(NOWHERE, 1_000),
  });
}
