/**
 * The pages anyone may fetch without a token (/docs and its assets, /openapi.json, /ui and its
 * assets) are limited per client address: a bucket of PUBLIC_LIMIT_PER_MINUTE refilled at that many
 * a minute; beyond it the address gets 429 with Retry-After. Without it one token-less client,
 * fetching /openapi.json in 16 loops (3,700 a second), tripled a merchant's create latency on the
 * same gateway (p50 6.5 -> 19 ms); a person reading the docs or opening the viewer makes a few
 * requests a page. Probes (/healthz, /readyz, /metrics) are not limited: the kubelet and Prometheus
 * must always get through. Kept in memory per replica, like the bad-token limit.
 */
import { InProgressSlots, rateLimited, releaseOnClose, type InProgressLimits } from '@dw/http-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenBuckets } from './token-bucket';

/** The token-less pages, by their route patterns. */
export function isPublicPage(route: string | undefined): boolean {
  return route === '/openapi.json' || route === '/ui' || route === '/ui/' || route === '/ui/assets/*' || route === '/docs' || !!route?.startsWith('/docs/');
}

/**
 * Token-less pages in progress at once, per client address and in all. An answer a client does not
 * read holds its stream and buffers until the stall timeout cuts it (tens of seconds): 42 addresses,
 * each asking 120 times for the docs' 1.7 MB script within the per-minute limit and reading none,
 * held about 17 KB of heap and 140 KB of memory each and took the gateway past its heap limit at
 * about 5,000 (killed by V8, and with it `npm start`; found by an outside audit). A browser opening
 * /ui or /docs asks for four or five at once.
 */
export const PUBLIC_IN_PROGRESS: InProgressLimits = { perKey: 8, total: 256 };

/** Applies the limits (TokenBuckets.perMinute of PUBLIC_LIMIT_PER_MINUTE, PUBLIC_IN_PROGRESS) to every public page of `app` (a hook on the root, so it sees the docs' routes too). */
export function limitPublicPages(app: FastifyInstance, perAddress: TokenBuckets): void {
  const inProgress = new InProgressSlots(PUBLIC_IN_PROGRESS);
  // A callback hook: it runs on every request and waits for nothing.
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    if (!isPublicPage(request.routeOptions.url)) return done();
    const slot = inProgress.acquire(request.ip);
    if ('refused' in slot) return done(rateLimited(1));
    const wait = perAddress.take(request.ip);
    if (wait > 0) {
      slot.release();
      return done(rateLimited(wait));
    }
    releaseOnClose(slot, reply.raw);
    done();
  });
}
