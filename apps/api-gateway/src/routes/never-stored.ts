/**
 * Every answer for a merchant, the gateway's own refusals (401, 429, 400) included, carries
 * `Cache-Control: no-store`: a balance, a statement page, callback URLs or a create's result are
 * one merchant's and true only now, never for a browser's or an intermediary's cache to keep and
 * serve again (Stripe's API answers the same). An upstream's own cache-control, where it sends one,
 * replaces this one as the forwarded answer's headers are copied.
 */
import type { FastifyInstance } from 'fastify';

export function neverStored(scope: FastifyInstance): void {
  scope.addHook('onRequest', (_request, reply, done) => {
    reply.header('cache-control', 'no-store');
    done();
  });
}
