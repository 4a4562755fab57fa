/**
 * The one hook that guards a route tree, cheapest refusal first:
 * 1. an address over its bad-token limit gets 429 at once (bad-token-limit.ts), unless its token is
 *    one the cache already knows;
 * 2. a token that cannot be one of ours (not API_TOKEN_PATTERN) gets 401 without any lookup;
 * 3. token → merchant through the cache (token-resolver.ts), 401 otherwise: the same body for every
 *    kind of bad token, and each one counts against the address;
 * 4. the per-token rate limit, after authentication, so a bad token gets 401 (or 429 per address),
 *    never the merchant's 429.
 */
import { API_TOKEN_PATTERN, HEADER_API_TOKEN } from '@dw/contracts';
import { rateLimited, unauthorized } from '@dw/http-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BadTokenLimit } from './bad-token-limit';
import type { RateLimiter } from './rate-limiter';
import type { TokenResolver } from './token-resolver';

export interface AuthDeps {
  resolver: TokenResolver;
  limiter: RateLimiter;
  badTokens: BadTokenLimit;
}

export function authenticate(app: FastifyInstance, { resolver, limiter, badTokens }: AuthDeps): void {
  const refuse = (request: FastifyRequest) => {
    badTokens.record(request.ip);
    return unauthorized();
  };

  app.addHook('onRequest', async (request) => {
    const token = request.headers[HEADER_API_TOKEN];
    const wellFormed = typeof token === 'string' && API_TOKEN_PATTERN.test(token);
    // A blocked address is served only from the cache: a merchant sharing it (NAT) with a guesser
    // keeps working with its known token, while the guesser's requests cost no lookup at all.
    const blockedFor = badTokens.blocked(request.ip);
    if (blockedFor > 0 && !(wellFormed && resolver.cached(token))) throw rateLimited(blockedFor);
    if (!wellFormed) throw refuse(request);
    const merchantId = await resolver.resolve(token);
    if (!merchantId) throw refuse(request);
    const wait = await limiter.take(merchantId);
    if (wait > 0) throw rateLimited(wait);
    request.merchantId = merchantId;
  });
}
