import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';

type SpanProcessor = NonNullable<NodeSDKConfiguration['spanProcessors']>[number];

/** True when the standard variables ask for traces to leave the process. */
export function tracesAreExported(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim());
  return Boolean(endpoint) && !exporters.includes('none');
}

// Spans are still created (so ids exist for traceparent headers and log lines) but go nowhere.
const discardSpans: SpanProcessor = {
  onStart: () => undefined,
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/**
 * The tracing part of the NodeSDK configuration. Left to itself the SDK would default to an OTLP
 * exporter aimed at localhost:4318 and retry it forever; with no endpoint configured we want
 * nothing to try to connect anywhere.
 */
export function traceExportConfig(): Partial<NodeSDKConfiguration> {
  if (!tracesAreExported()) return { spanProcessors: [discardSpans] };
  // OTLP over HTTP (JSON); the exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout,
  // compression) and the SDK wraps it in a batch processor that reads OTEL_BSP_*.
  return { traceExporter: new OTLPTraceExporter() };
}
