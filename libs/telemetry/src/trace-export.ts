import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { envList } from './env-list';
import { batchOptionsFromEnv } from './sdk-env';

/** True when the standard variables ask for traces to leave the process. */
export function tracesAreExported(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const exporters = envList(env.OTEL_TRACES_EXPORTER);
  return Boolean(endpoint) && !exporters.includes('none');
}

/**
 * The tracer provider's span processors. With no endpoint configured nothing may try to connect
 * anywhere (an exporter left to its defaults would aim at localhost:4318 and retry forever): no
 * processor at all; spans are then not recorded either (start-telemetry.ts), though their ids
 * still reach traceparent headers and log lines.
 */
export function traceSpanProcessors(): SpanProcessor[] {
  if (!tracesAreExported()) return [];
  // OTLP over HTTP (JSON); the exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout,
  // compression); OTEL_BSP_* are read by sdk-env.ts.
  return [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptionsFromEnv() })];
}
