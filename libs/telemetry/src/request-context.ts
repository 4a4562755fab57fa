/**
 * Each request's trace context, for a Fastify server when the http instrumentation is left out
 * (start-telemetry.ts: no span is recorded). What the instrumentation gave such a server was this
 * and nothing else: the caller's `traceparent` continued (or a new trace begun) under a span id of
 * the server's own, active while the request's hooks and handler run, so that log lines carry
 * `trace_id`/`span_id` and what the handler sends on (a forwarded request, an outbox row's
 * `traceparent`, a token lookup) continues the same trace. The span is not recorded (sampled flag
 * `00`), as the instrumentation's was not.
 *
 * Entered once, in the first onRequest hook: on Node 24 (AsyncLocalStorage on AsyncContextFrame)
 * it then stays active through the body, which arrives by the socket's events, the handler, and
 * the onResponse hooks after the answer went out, where the request's log line is written
 * (test/preload.test.ts proves each with a body sent 100 ms after its headers and a 4 MB answer).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { isProbePath } from './instrumentations';
import { serversOwnRequestContext } from './start-telemetry';
import { contextFromHeaders } from './trace-context';

/**
 * Registers the hook that gives every request (probes and scrapes aside) its trace context, when
 * `serversOwnRequestContext()`; otherwise does nothing (the instrumentation does it, or telemetry
 * is off). Register it before any other hook, so that they all run inside the context.
 */
export function traceRequests(app: FastifyInstance): void {
  if (!serversOwnRequestContext()) return;
  const tracer = trace.getTracer('@dw/telemetry');
  app.addHook('onRequest', (request, _reply, done) => {
    if (isProbePath(request.url)) return done();
    const parent = contextFromHeaders(request.headers);
    // Sampled out: a span context with its own id, and no recording (nothing to end).
    const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER }, parent);
    context.with(trace.setSpan(parent, span), done);
  });
}
