/**
 * Forwarding through @fastify/reply-from over keep-alive undici pools. The client's own
 * x-merchant-id, x-internal-auth and token never reach the services; the authenticated merchant's
 * id does, with the gateway's proof of this very request (libs/http-kit internal-auth.ts).
 */
import { HEADER_API_TOKEN, HEADER_MERCHANT_ID, HEADER_REQUEST_ID } from '@dw/contracts';
import { HEADER_INTERNAL_AUTH, sendProblem, type InternalAuth } from '@dw/http-kit';
import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Upstream } from './upstreams';

/** Registers the upstream for a route scope; its handlers then call `forward`. */
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];

declare module 'fastify' {
  interface FastifyInstance {
    internalAuth: InternalAuth;
  }
}

export async function forwardTo(scope: FastifyInstance, up: Upstream): Promise<void> {
  await scope.register(replyFrom, { base: up.url, undici: up.pool });
}

export function forward(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // The one place the upstream path is chosen: the proof below signs exactly this.
  const target = request.url;
  return reply.from(target, {
    rewriteRequestHeaders: (req, headers) => {
      const out = { ...headers };
      delete out[HEADER_API_TOKEN];
      delete out[HEADER_MERCHANT_ID];
      delete out[HEADER_INTERNAL_AUTH];
      // OpenTelemetry's undici instrumentation writes the gateway span's own trace context; a copy
      // of the client's would make a second, conflicting traceparent header.
      for (const h of TRACE_HEADERS) delete out[h];
      const proof = request.server.internalAuth.headers({
        method: request.method,
        path: target,
        merchantId: req.merchantId ?? '',
        requestId: String(req.id),
      });
      return { ...out, ...proof };
    },
    onError: (rep, { error }) => {
      rep.request.log.warn({ err: error }, 'upstream unavailable');
      sendProblem(rep.request as FastifyRequest, rep as FastifyReply, 503, 'service_unavailable', 'A service this request needs is unavailable; retry later.');
    },
  });
}
