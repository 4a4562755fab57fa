/**
 * The one hook that guards a route tree, cheapest refusal first:
 * 1. a token that cannot be one of ours (not API_TOKEN_PATTERN) gets 401 without any lookup, and
 *    counts against its address; past the address's bad-token limit, 429 (bad-token-limit.ts);
 * 2. token → merchant through the cache (token-resolver.ts); a lookup takes its place in the
 *    address's bad-token budget first, and gives it back when the token is good. An unknown token
 *    gets 401: the same body for every kind of bad token. Past the limit, an address's lookups go
 *    one at a time through the slow lane, and an unknown token gets 429;
 * 3. the per-token rate limit, after authentication, so a bad token gets 401 (or 429 per address),
 *    never the merchant's 429, and a good token never the address's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { API_TOKEN_PATTERN, HEADER_API_TOKEN } from '@dw/contracts';
import { MERCHANT_CHALLENGE, rateLimited, unauthorized } from '@dw/http-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SLOW_LANE_WAIT_MS, type BadTokenLimit } from './bad-token-limit';
import type { RateLimiter } from './rate-limiter';
import type { TokenResolver } from './token-resolver';

export interface AuthDeps {
  resolver: TokenResolver;
  limiter: RateLimiter;
  badTokens: BadTokenLimit;
}

/** The address's limit, told apart from the token's own rate limit. */
const BAD_TOKENS = 'Too many requests with a bad token from your address';
const pastBadTokenLimit = (seconds: number) => rateLimited(seconds, BAD_TOKENS);

export function authenticate(app: FastifyInstance, { resolver, limiter, badTokens }: AuthDeps): void {
  /**
   * The merchant of a well-formed token neither cached nor being looked up, or undefined (a 401,
   * counted); a new lookup takes its place in the address's budget first.
   */
  async function lookUp(address: string, token: string): Promise<string | undefined> {
    if (badTokens.reserve(address)) {
      let merchantId: string | undefined;
      try {
        merchantId = await resolver.resolve(token);
      } catch (error) {
        badTokens.refund(address); // no answer (503): not known to be bad
        throw error;
      }
      if (merchantId) badTokens.refund(address);
      return merchantId;
    }
    const blockedFor = badTokens.blocked(address);
    if (!badTokens.enterSlowLane(address)) throw pastBadTokenLimit(blockedFor);
    try {
      await sleep(SLOW_LANE_WAIT_MS);
      const merchantId = await resolver.resolve(token);
      if (!merchantId) throw pastBadTokenLimit(Math.max(1, badTokens.blocked(address)));
      return merchantId;
    } finally {
      badTokens.leaveSlowLane(address);
    }
  }

  /** A bad token known without a lookup: 401, counted, or past the address's limit 429. */
  const refuse = (address: string) => {
    const blockedFor = badTokens.blocked(address);
    if (blockedFor > 0) return pastBadTokenLimit(blockedFor);
    badTokens.record(address);
    return unauthorized(MERCHANT_CHALLENGE);
  };

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const token = request.headers[HEADER_API_TOKEN];
    if (typeof token !== 'string' || !API_TOKEN_PATTERN.test(token)) throw refuse(request.ip);
    let merchantId = resolver.cached(token);
    if (!merchantId) {
      // A token known bad, or being looked up for another request (a burst with a token not cached
      // yet), needs no lookup of its own; only a new lookup takes a place in the budget before it starts.
      const known = resolver.known(token);
      merchantId = known ? await known : await lookUp(request.ip, token);
      if (!merchantId) throw known ? refuse(request.ip) : unauthorized(MERCHANT_CHALLENGE);
    }
    const wait = await limiter.take(merchantId);
    if (wait > 0) throw rateLimited(wait);
    request.merchantId = merchantId;
  });
}
