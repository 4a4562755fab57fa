import { context, isSpanContextValid, propagation, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';

/** The active span's context, when there is a real one (not the no-op/invalid span). */
function activeSpanContext() {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * W3C `traceparent` of the active span, e.g. to store beside an outbox row so the relay can
 * continue the request's trace later. Undefined outside a span.
 */
export function currentTraceparent(): string | undefined {
  const sc = activeSpanContext();
  if (!sc) return undefined;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${sc.traceId}-${sc.spanId}-${flags}`;
}

/** Trace id of the active span (what Jaeger searches by); undefined outside a span. */
export function currentTraceId(): string | undefined {
  return activeSpanContext()?.traceId;
}

/**
 * Writes `traceparent` (and `tracestate`/`baggage` when present) for `ctx`, the active context by
 * default, into a header object: AMQP message headers, an outgoing request's headers, a DB row.
 */
export function injectTraceHeaders(carrier: Record<string, unknown>, ctx: Context = context.active()): void {
  propagation.inject(ctx, carrier);
}

// amqplib hands header values over as strings or Buffers, and a carrier may come from anyone:
// keep only string-like values, under lower-case names (what the propagators look up).
function toTextCarrier(carrier: unknown): Record<string, string> {
  const text: Record<string, string> = {};
  if (carrier === null || typeof carrier !== 'object') return text;
  for (const [key, value] of Object.entries(carrier)) {
    if (typeof value === 'string') text[key.toLowerCase()] = value;
    else if (value instanceof Uint8Array) text[key.toLowerCase()] = Buffer.from(value).toString('utf8');
  }
  return text;
}

/**
 * The context described by incoming headers, to use as `parent` of the span that handles them.
 * Without a valid `traceparent` (missing, garbage) it is the empty root context, so the handler
 * starts a new trace rather than failing or joining an unrelated one.
 */
export function contextFromHeaders(carrier: Record<string, unknown> | undefined): Context {
  try {
    return propagation.extract(ROOT_CONTEXT, toTextCarrier(carrier));
  } catch {
    return ROOT_CONTEXT;
  }
}

/**
 * Runs `fn` outside any trace: work done for many requests at once (a group-committed batch) would
 * otherwise be recorded under whichever request happened to start it. Each request records its own
 * span around its wait instead.
 */
export function outsideTraces<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/**
 * Tells the HTTP server instrumentation which route the incoming request matched: it then records
 * `http.route` and names the server span `POST /api/createDeposit` instead of `POST`, so Jaeger's
 * operation list tells routes apart. A no-op outside an instrumented request.
 */
export function nameServerSpanByRoute(route: string): void {
  const metadata = getRPCMetadata(context.active());
  if (metadata?.type === RPCType.HTTP) metadata.route = route;
}
