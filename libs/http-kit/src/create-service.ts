/**
 * The Fastify instance every service starts from: logger, request ids, strict validation,
 * problem+json errors, HTTP metrics and health routes. Each app's app.ts adds its own routes.
 */
import { HEADER_REQUEST_ID } from '@dw/contracts';
import { httpRequestDuration, nameServerSpanByRoute, traceRequests } from '@dw/telemetry';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { problemClientErrorHandler, trackExchanges } from './client-error';
import { refuseMalformedQueries, refuseNonCanonicalPaths } from './canonical-path';
import { answerConnect } from './connect';
import { ApiError } from './errors';
import { registerHealthRoutes, type ReadinessCheck } from './health';
import { useStrictJsonParser } from './json-body';
import { sendProblem } from './problem';
import { registerProblemHandling } from './problem-handler';
import { hostHeaderFault } from './host-header';
import { genReqId } from './request-id';
import { closeUnusedConnectionsOnClose } from './unused-connections';
import { validatorCompiler } from './validation';

export const BODY_LIMIT_BYTES = 64 * 1024;
/**
 * The longest a request may take to arrive, headers and body (Node's requestTimeout). Fastify sets
 * it to 0, no limit: a client trickling a body byte by byte held its connection for good (seen
 * still open after 100 s). 30 s is ample for 64 KiB; the headers alone get 20 s. Node checks its
 * connections every second, not every 30 s, so a request ends within a second of its limit.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;
/**
 * How long a connection may go without a byte moving either way before it is closed (Node's socket
 * timeout, Fastify's connectionTimeout; CLIENT_STALL_TIMEOUT_MS). A client that stops reading a
 * response fills the socket's buffers; the response then stops writing (backpressure), nothing
 * moves, and the connection is closed, which destroys the response and whatever it streams from:
 * the progress watchdog a paused body never gets from undici's bodyTimeout. Until this, Fastify's
 * default was 0 (never), and 12 unread CSV downloads held transactions-svc's heap until it died.
 * A keep-alive connection between requests keeps Fastify's own keepAliveTimeout (72 s).
 */
export const CLIENT_STALL_TIMEOUT_MS = 30_000;
/** A request's header section may hold this much (Node's default; client-error.ts answers beyond it). */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * What a service behind the gateway takes: the 16 KiB a client may send plus room for the headers
 * the gateway adds (merchant, internal signature, trace, forwarding; under 1 KiB). With the same
 * 16 KiB, a client's 15.7 KiB head, taken by the gateway, was refused by transactions-svc, and its
 * "exceed 16 KiB" 400 reached a client that had sent less, on a connection left open.
 */
export const BEHIND_GATEWAY_MAX_HEADER_BYTES = 20 * 1024;
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export interface ServiceOptions {
  logger: FastifyBaseLogger;
  readiness: Record<string, ReadinessCheck>;
  bodyLimit?: number;
  /** Turns dependency errors (a lost database connection, say) into problems such as 503. */
  mapError?: (error: unknown) => ApiError | undefined;
  /** Proxy hops whose X-Forwarded-For is believed for request.ip (Fastify's trustProxy); 0 by default. */
  trustProxy?: number;
  /** REQUEST_TIMEOUT_MS unless a test wants to wait less. */
  requestTimeoutMs?: number;
  /** CLIENT_STALL_TIMEOUT_MS unless configured otherwise. */
  clientStallTimeoutMs?: number;
  /** METRICS_PORT: when set (>0), GET /metrics is served there only (run-service.ts), not on this port. */
  metricsPort?: number;
  /** MAX_HEADER_BYTES, or BEHIND_GATEWAY_MAX_HEADER_BYTES for a service only the gateway calls. */
  maxHeaderBytes?: number;
}

/** The listener settings every service takes from its config (METRICS_PORT, CLIENT_STALL_TIMEOUT_MS). */
export type ListenerSettings = Pick<ServiceOptions, 'metricsPort' | 'clientStallTimeoutMs'>;

/** The ListenerSettings of a service's parsed config. */
export const listenerSettings = (config: { metricsPort: number; clientStallTimeoutMs: number }): ListenerSettings => ({
  metricsPort: config.metricsPort,
  clientStallTimeoutMs: config.clientStallTimeoutMs,
});

/**
 * What Fastify's router refuses before any route or hook runs: a path that is not valid
 * percent-encoding (`/api/x%ZZ`, FST_ERR_BAD_URL) or a path parameter over maxParamLength. Without
 * this Fastify answers in its own JSON shape, no problem+json and no request id.
 */
function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header(HEADER_REQUEST_ID, request.id).header('x-content-type-options', 'nosniff');
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const detail = error.code === 'FST_ERR_BAD_URL' ? 'The request path is not valid percent-encoding.' : 'A path parameter is too long.';
    sendProblem(request, reply, 400, 'validation_failed', detail, [{ path: 'path', message: detail }]);
    return;
  }
  request.log.error({ err: error }, 'router error');
  sendProblem(request, reply, 500, 'internal', 'An internal error occurred; it has been logged.');
}

export function createService(opts: ServiceOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger,
    genReqId,
    // One line per request is written by the onResponse hook below instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT_BYTES,
    requestTimeout: opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    connectionTimeout: opts.clientStallTimeoutMs ?? CLIENT_STALL_TIMEOUT_MS,
    http: {
      // host-header.ts answers a missing (or repeated) Host with a problem, where Node's own check wrote a bare 400.
      requireHostHeader: false,
      maxHeaderSize: opts.maxHeaderBytes ?? MAX_HEADER_BYTES,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: 1_000,
    },
    // Fastify's own 503 while closing skips every hook: a body of its own shape, no problem+json, no
    // request id. The onRequest hook below answers it instead, once `closing` is set.
    return503OnClosing: false,
    trustProxy: (_address: string, hop: number) => hop < (opts.trustProxy ?? 0),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    routerOptions: { maxParamLength: 200 },
    clientErrorHandler: problemClientErrorHandler,
    frameworkErrors: answerFrameworkError,
  });
  // First: every hook after it runs inside the request's trace context (when the server sets it up itself).
  traceRequests(app);
  app.setValidatorCompiler(validatorCompiler);
  useStrictJsonParser(app);
  registerProblemHandling(app, opts.mapError);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header(HEADER_REQUEST_ID, request.id);
    // Every answer is what its content-type says (JSON, CSV, problem+json, a page): never sniffed.
    reply.header('x-content-type-options', 'nosniff');
    if (closing) {
      // A request that arrives while the process shuts down (SIGTERM) on a connection still open.
      reply.header('connection', 'close');
      return sendProblem(request, reply, 503, 'service_unavailable', 'This instance is shutting down; retry (creates are idempotent).');
    }
    const host = hostHeaderFault(request.raw);
    if (host !== undefined) {
      reply.header('connection', 'close');
      return sendProblem(request, reply, 400, 'validation_failed', `The Host header ${host}.`, [{ path: 'header:host', message: host }]);
    }
    // The server span is named by route (POST /api/createDeposit), not by method alone.
    if (request.routeOptions.url !== undefined) nameServerSpanByRoute(request.routeOptions.url);
  });
  // Before every hook an app adds (authentication included) and every handler.
  refuseNonCanonicalPaths(app);
  refuseMalformedQueries(app);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    httpRequestDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, seconds);
    // Probes and scrapes arrive every few seconds: keep them out of the info log.
    const level = PROBE_ROUTES.has(route) ? 'debug' : 'info';
    request.log[level](
      { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request done',
    );
  });

  answerConnect(app);
  // An Expect other than 100-continue: Node answered a bare 417 (no body, no request id) unless
  // someone listens. RFC 9110 §10.1.1 lets a server ignore an expectation it does not know, so the
  // request is served as if it had none (the gateway forwards no Expect header).
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  closeUnusedConnectionsOnClose(app);
  trackExchanges(app.server);
  registerHealthRoutes(app, opts.readiness, { metrics: !opts.metricsPort });
  return app;
}
