import { getNodeAutoInstrumentations } from '@opentelemetry/auto-instrumentations-node';
import type { IncomingMessage } from 'node:http';

// What an HTTP + AMQP + PostgreSQL service needs. Everything else in the auto-instrumentations
// bundle (fs, dns, net, the runtime-metrics and framework ones) only adds noise or start-up cost.
// Not amqplib: the relay's publish and callback-svc's delivery record their own spans, continued
// from the outbox row's and the message's traceparent; the library's spans beside them repeated
// them (two producer spans per message), at about a tenth of each process's CPU per message
// (profiles of a create load and of a drain, docs/decisions.md).
const WANTED = ['http', 'undici', 'pg', 'pino'];

// Probes and scrapes hit these every few seconds; a trace per probe would bury the real ones.
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function isProbe(req: IncomingMessage): boolean {
  const path = (req.url ?? '').split('?')[0] ?? '';
  return UNTRACED_PATHS.has(path);
}

/**
 * The instrumentations to register. `OTEL_NODE_ENABLED_INSTRUMENTATIONS` and
 * `OTEL_NODE_DISABLED_INSTRUMENTATIONS` still win when the operator sets them; only their default
 * changes to our short list (the library reads the variable itself, so it is set for the call
 * and restored, leaving the environment of child processes untouched).
 */
export function serviceInstrumentations(): ReturnType<typeof getNodeAutoInstrumentations> {
  const previous = process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS;
  if (!previous) process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS = WANTED.join(',');
  try {
    return getNodeAutoInstrumentations({
      '@opentelemetry/instrumentation-http': { ignoreIncomingRequestHook: isProbe },
      // Without a parent span a query is a poll (outbox relay, readiness): keep it out of Jaeger.
      '@opentelemetry/instrumentation-pg': { requireParentSpan: true, ignoreConnectSpans: true },
      // Our own pino mixin adds trace_id/span_id; logs go to stdout as JSON, not over OTLP.
      '@opentelemetry/instrumentation-pino': { disableLogSending: true },
    });
  } finally {
    if (previous === undefined) delete process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS;
  }
}
