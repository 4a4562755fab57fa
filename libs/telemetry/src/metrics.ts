import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus registry, served by each app's `GET /metrics`. It carries prom-client's
 * default process metrics (CPU, memory, event loop lag, handles); apps register their own metrics
 * here with `registers: [metricsRegistry]`.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Server-side request latency, named after OpenTelemetry's HTTP semantic conventions. */
export const httpRequestDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'Duration of HTTP requests served, in seconds.',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [metricsRegistry],
});

/** Body and content type for a `GET /metrics` reply. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
