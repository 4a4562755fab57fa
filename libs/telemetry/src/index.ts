export { startTelemetry, shutdownTelemetry } from './start-telemetry';
export { traceRequests } from './request-context';
export { createLogger } from './logger';
export { metricsRegistry, httpRequestDuration, renderMetrics } from './metrics';
export { currentTraceparent, currentTraceId, injectTraceHeaders, contextFromHeaders, nameServerSpanByRoute, outsideTraces } from './trace-context';
export { failSpan, SpanKind, withSpan, type Span, type WithSpanOptions } from './with-span';
