/**
 * The one hook that guards a route tree: token → merchant (401 otherwise, the same body for every
 * kind of bad token), then the per-token rate limit (so a bad token gets 401, not 429).
 */
import { HEADER_API_TOKEN } from '@dw/contracts';
import { rateLimited, unauthorized } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type { TokenBuckets } from './token-bucket';
import type { TokenResolver } from './token-resolver';

export function authenticate(app: FastifyInstance, resolver: TokenResolver, buckets: TokenBuckets): void {
  app.addHook('onRequest', async (request) => {
    const token = request.headers[HEADER_API_TOKEN];
    if (typeof token !== 'string' || token.length === 0 || token.length > 512) throw unauthorized();
    const merchantId = await resolver.resolve(token);
    if (!merchantId) throw unauthorized();
    const wait = buckets.take(merchantId);
    if (wait > 0) throw rateLimited(wait);
    request.merchantId = merchantId;
  });
}
