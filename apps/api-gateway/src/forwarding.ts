/**
 * Forwarding through @fastify/reply-from over keep-alive undici pools. The client's own
 * x-merchant-id, x-internal-auth and token never reach the services; the authenticated merchant's
 * id does, with the gateway's proof of this very request, body included (libs/http-kit
 * internal-auth.ts). Each attempt, the one retry included (upstream-retry.ts), carries a proof of its own.
 */
import { HEADER_API_TOKEN, HEADER_MERCHANT_ID, HEADER_REQUEST_ID } from '@dw/contracts';
import { HEADER_INTERNAL_AUTH, logUpstreamUnavailable, sendProblem, type InternalAuth } from '@dw/http-kit';
import { injectTraceHeaders } from '@dw/telemetry';
import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MerchantConcurrency } from './merchant-concurrency';
import type { MerchantPace } from './merchant-pace';
import { retryDelayFor } from './upstream-retry';
import type { Upstream } from './upstreams';

/** W3C trace context and baggage: the gateway writes its own on the forwarded request. */
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];

/**
 * Headers about one connection, not about the request or the answer (RFC 9110 §7.6.1): neither
 * direction forwards them. reply-from drops only Connection, Transfer-Encoding and the names
 * Connection lists, and only on the request. Forwarded to undici, Keep-Alive, Upgrade and Expect
 * were refused and a valid request answered 503 (curl sends Expect: 100-continue for larger bodies;
 * Node has already answered it with 100 Continue). Copied from the upstream's answer,
 * `connection: keep-alive` overrode a client's `Connection: close`, and the gateway kept open a
 * connection the client was waiting to see closed.
 */
const CONNECTION_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings'];
const NOT_FORWARDED = [...CONNECTION_HEADERS, 'expect'];

/**
 * What never goes upstream: the client's token and its claims to be a merchant or the gateway, the
 * client's trace headers (the gateway writes its own) and the connection headers above.
 */
const DROPPED_REQUEST_HEADERS = new Set([HEADER_API_TOKEN, HEADER_MERCHANT_ID, HEADER_INTERNAL_AUTH, ...TRACE_HEADERS, ...NOT_FORWARDED]);
const DROPPED_ANSWER_HEADERS = new Set(CONNECTION_HEADERS);

/**
 * The headers less the dropped names, copied into a new object: once per request each way, so
 * without `delete` (which turned each copy into a slow dictionary-mode object) and without the
 * copies of copies the spread syntax made.
 */
function without<T>(headers: Record<string, T>, dropped: ReadonlySet<string>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const name of Object.keys(headers)) if (!dropped.has(name)) out[name] = headers[name]!;
  return out;
}

declare module 'fastify' {
  interface FastifyInstance {
    internalAuth: InternalAuth;
  }
}

/**
 * Registers the upstream for a route scope; its handlers then call `forward`. Each request of the
 * scope, once authenticated and validated, first takes a place in its merchant's share of the
 * upstream (merchant-concurrency.ts; per client address where no merchant is named), held until
 * its answer is over. `shares` may pick the share by request, where some requests cost far more
 * than others.
 */
export async function forwardTo(
  scope: FastifyInstance,
  up: Upstream,
  shares: MerchantConcurrency | ((request: FastifyRequest) => MerchantConcurrency),
): Promise<void> {
  const shareOf = typeof shares === 'function' ? shares : () => shares;
  // Our own onResponse line logs each request; reply-from's two more per request were noise (and CPU).
  await scope.register(replyFrom, { base: up.url, undici: up.pool, disableRequestLogging: true });
  scope.addHook('preHandler', async (request, reply) => {
    const release = await shareOf(request).enter(request.merchantId || `client ${request.ip}`, reply.raw);
    // 'close' comes once the answer is over, whichever way: sent, failed, or the client cut off.
    if (reply.raw.closed || reply.raw.destroyed) release();
    else reply.raw.once('close', release);
  });
}

/**
 * The path alone is handed to reply-from, which then appends the client's query string exactly as
 * it arrived: reply-from runs decodeURIComponent over the source it is given and throws a URIError
 * (a 500) on a query such as `cursor=%E0%A4%A`. The query's meaning is checked by the route's
 * schema here and again by the service, so forwarding it byte for byte is also the honest choice.
 */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

function pathOf(request: FastifyRequest): string | undefined {
  // `GET http://host/api/x HTTP/1.1` (absolute form) reaches the same route as `GET /api/x`.
  const target = request.url.replace(ABSOLUTE_FORM, '');
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (!path.startsWith('/')) return undefined;
  try {
    decodeURIComponent(path);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * What @fastify/reply-from logs (at warn, with the error's stack) for every request whose upstream
 * failed, before the gateway's own `upstream unavailable` line: main.ts drops it (createLogger's
 * dropMessages), so an outage writes one line per request rather than three.
 */
export const REPLY_FROM_ERROR_LOG = 'response errored';

export function forward(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return forwardAnswer(request, reply);
}

/** `forward`, with the answer's body passed on at the merchant's pace (merchant-pace.ts). */
export function pacedForward(pace: MerchantPace) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => forwardAnswer(request, reply, pace);
}

function forwardAnswer(request: FastifyRequest, reply: FastifyReply, pace?: MerchantPace): FastifyReply {
  const path = pathOf(request);
  if (path === undefined) {
    return sendProblem(request, reply, 400, 'validation_failed', 'The request path is not valid.', [
      { path: 'path', message: 'must be an absolute path in valid percent-encoding' },
    ]);
  }
  // What the upstream receives: this path and the client's query as it arrived (reply-from appends
  // it); the proof below signs exactly that.
  const q = request.url.indexOf('?');
  const target = q === -1 ? path : path + request.url.slice(q);
  // The body was parsed (and validated) as JSON here; it goes on as JSON, whatever parameters the
  // client's content-type carried (reply-from's strict parser throws on `application/json;;;`).
  // These exact bytes are what the proof's digest covers.
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const started = Date.now();
  const prove = (merchantId: string | undefined, requestId: string) =>
    request.server.internalAuth.headers({ method: request.method, path: target, merchantId: merchantId ?? '', requestId, body });
  return reply.from(path, {
    ...(body === undefined ? {} : { body, contentType: 'application/json' }),
    rewriteRequestHeaders: (req, headers) => {
      const out = without(headers, DROPPED_REQUEST_HEADERS);
      // The upstream continues the gateway's server span (which continues the client's trace, if
      // it sent one): the client's own headers would name the wrong parent.
      injectTraceHeaders(out);
      return Object.assign(out, prove(req.merchantId, String(req.id)));
    },
    // Once, on a connection error only, never on an answer (upstream-retry.ts). A receiver accepts a
    // proof once, so the retry carries a proof of its own.
    retryDelay: ({ req, res, err, attempt }) => {
      const delay = retryDelayFor({
        method: request.method,
        attempt,
        err: err as { code?: string } | null,
        answered: Boolean(res),
        elapsedMs: Date.now() - started,
      });
      if (delay !== null) {
        const headers = req.headers as Record<string, string>;
        headers[HEADER_INTERNAL_AUTH] = prove(request.merchantId, String(request.id))[HEADER_INTERNAL_AUTH]!;
      }
      return delay;
    },
    rewriteHeaders: (headers) => without(headers, DROPPED_ANSWER_HEADERS),
    ...(pace && { onResponse: (req, rep, res) => rep.send(pace.paced(req.merchantId, res.stream)) }),
    onError: (rep, { error }) => {
      // One line per failed request (reply-from's own line is dropped: REPLY_FROM_ERROR_LOG).
      logUpstreamUnavailable(rep.request.log, error);
      sendProblem(rep.request as FastifyRequest, rep as FastifyReply, 503, 'service_unavailable', 'A service this request needs is unavailable; retry later.');
    },
  });
}
