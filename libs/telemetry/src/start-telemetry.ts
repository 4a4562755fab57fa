import { context, diag, DiagConsoleLogger, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { diagLogLevelFromString, getBooleanFromEnv, getStringFromEnv } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { AlwaysOffSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import { createInstrumentations, instrumentationNames, type InstrumentationName } from './instrumentations';
import { defaultPropagator, propagatorFromEnv } from './propagators';
import { samplerFromEnv, spanLimitsFromEnv } from './sdk-env';
import { serviceResource } from './resource';
import { traceSpanProcessors, tracesAreExported } from './trace-export';

// The preload script and the app are bundled separately, so each bundle has its own copy of this
// module; the handle lives on the process so that either copy can see it and stop it.
const STATE_KEY = Symbol.for('dw.telemetry.state');
type State = {
  shutdown: () => Promise<void>;
  stopped?: Promise<void>;
  /** Spans are not recorded and http is not instrumented: servers set up each request's context (request-context.ts). */
  serversOwnRequestContext?: boolean;
};
const holder = globalThis as { [STATE_KEY]?: State };

/**
 * Starts OpenTelemetry for this process: instrumentation of http, undici and pg (RabbitMQ
 * publishes and deliveries record their own spans), W3C trace-context + baggage propagation (unless
 * OTEL_PROPAGATORS says otherwise) with the AsyncLocalStorage context manager, and OTLP/HTTP export
 * only when an OTLP endpoint is configured (and spans recorded only then, unless
 * OTEL_TRACES_SAMPLER says otherwise). Call it before anything else is required (the app's
 * preloaded `instrumentation.ts`). A second call does nothing. OTEL_SDK_DISABLED=true turns all of
 * it off.
 *
 * It does what @opentelemetry/sdk-node's NodeSDK did for us, from the tracing packages alone: the
 * NodeSDK module graph loads every exporter (gRPC, protobuf, zipkin, prometheus, logs, metrics) for
 * about 36 MB of RSS per process, and auto-instrumentations-node another ~6 MB. Read from the
 * environment as before: OTEL_SDK_DISABLED, OTEL_LOG_LEVEL, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_NODE_RESOURCE_DETECTORS, OTEL_PROPAGATORS (tracecontext, baggage,
 * none), OTEL_TRACES_SAMPLER(_ARG), the span limits and OTEL_BSP_* (sdk-env.ts: trace SDK 3
 * reads no environment), OTEL_EXPORTER_OTLP_*, OTEL_TRACES_EXPORTER=none and
 * OTEL_NODE_ENABLED/DISABLED_INSTRUMENTATIONS (among the three).
 */
export function startTelemetry(serviceName: string, opts: { without?: readonly InstrumentationName[] } = {}): void {
  if (holder[STATE_KEY]) return;
  if (getBooleanFromEnv('OTEL_SDK_DISABLED')) {
    holder[STATE_KEY] = { shutdown: () => Promise.resolve() };
    return;
  }
  const logLevel = getStringFromEnv('OTEL_LOG_LEVEL');
  if (logLevel != null) diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) });

  const sampling = unexportedSampler();
  // With every span sampled out, the http instrumentation's work per request (attributes, wrapped
  // emitters, a span) is all for nothing but the request's trace context, which a server built on
  // createService sets up for a fraction of it (request-context.ts); so it is left out, unless
  // the operator lists it in OTEL_NODE_ENABLED_INSTRUMENTATIONS.
  const recorded = !(sampling.sampler instanceof AlwaysOffSampler);
  const names = instrumentationNames(recorded ? opts.without : [...(opts.without ?? []), 'http']);
  registerInstrumentations({ instrumentations: createInstrumentations(names) });
  const provider = new TracerProvider({
    resource: serviceResource(serviceName),
    spanProcessors: traceSpanProcessors(),
    spanLimits: spanLimitsFromEnv(),
    ...sampling,
  });
  registerGlobals(provider);
  holder[STATE_KEY] = { shutdown: () => provider.shutdown(), serversOwnRequestContext: !recorded && !names.includes('http') };
}

/**
 * True when this process's HTTP servers must give each request its trace context themselves
 * (`traceRequests` of request-context.ts): telemetry is started, spans are not recorded and the
 * http instrumentation is not loaded.
 */
export function serversOwnRequestContext(): boolean {
  return holder[STATE_KEY]?.serversOwnRequestContext === true;
}

/**
 * What sdk-trace-node 2.x's NodeTracerProvider.register() did, which SDK 3 leaves to the caller:
 * the global tracer provider, the AsyncLocalStorage context manager (so a span started inside a
 * handler parents the queries and calls it makes) and the propagator (OTEL_PROPAGATORS unset:
 * W3C tracecontext + baggage; none: no propagator).
 */
function registerGlobals(provider: TracerProvider): void {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const fromEnv = propagatorFromEnv();
  const propagator = fromEnv === undefined ? defaultPropagator() : fromEnv;
  if (propagator) propagation.setGlobalPropagator(propagator);
}

/**
 * Flushes buffered spans and stops the tracer provider. Apps call it on SIGTERM after closing their
 * servers and consumers, so the spans of the last requests still reach the collector. Safe to call
 * when telemetry was never started, and more than once.
 */
export async function shutdownTelemetry(): Promise<void> {
  const state = holder[STATE_KEY];
  if (!state) return;
  state.stopped ??= state.shutdown();
  await state.stopped;
}

/**
 * Spans that no exporter takes are not recorded: with no OTLP endpoint (or OTEL_TRACES_EXPORTER=none)
 * and no OTEL_TRACES_SAMPLER of the operator's, every span is sampled out. Trace context still flows
 * (a non-recording span has its own span id, so traceparent headers, the outbox row and log lines
 * keep their trace ids), with the sampled flag `00`: nothing of it was recorded. Recording spans that
 * went nowhere cost about a sixth of the CPU per create across the services (docs/decisions.md).
 */
function unexportedSampler(env: NodeJS.ProcessEnv = process.env): { sampler?: Sampler } {
  const fromEnv = samplerFromEnv();
  if (fromEnv) return { sampler: fromEnv };
  if (tracesAreExported(env)) return {};
  return { sampler: new AlwaysOffSampler() };
}
