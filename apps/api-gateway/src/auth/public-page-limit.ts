/**
 * The pages anyone may fetch without a token (/docs and its assets, /openapi.json, /ui and its
 * assets) are limited per client address: a bucket of PUBLIC_LIMIT_PER_MINUTE refilled at that many
 * a minute; beyond it the address gets 429 with Retry-After. Without it one token-less client,
 * fetching /openapi.json in 16 loops (3,700 a second), tripled a merchant's create latency on the
 * same gateway (p50 6.5 -> 19 ms); a person reading the docs or opening the viewer makes a few
 * requests a page. Probes (/healthz, /readyz, /metrics) are not limited: the kubelet and Prometheus
 * must always get through. Kept in memory per replica, like the bad-token limit.
 */
import { rateLimited } from '@dw/http-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenBuckets } from './token-bucket';

/** The token-less pages, by their route patterns. */
export function isPublicPage(route: string | undefined): boolean {
  return route === '/openapi.json' || route === '/ui' || route === '/ui/assets/*' || route === '/docs' || !!route?.startsWith('/docs/');
}

/** Applies the limit (TokenBuckets.perMinute of PUBLIC_LIMIT_PER_MINUTE) to every public page of `app` (a hook on the root, so it sees the docs' routes too). */
export function limitPublicPages(app: FastifyInstance, perAddress: TokenBuckets): void {
  // A callback hook: it runs on every request and waits for nothing.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const wait = isPublicPage(request.routeOptions.url) ? perAddress.take(request.ip) : 0;
    done(wait > 0 ? rateLimited(wait) : undefined);
  });
}
