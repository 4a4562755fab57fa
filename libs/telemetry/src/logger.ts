import { pino, type DestinationStream, type Logger } from 'pino';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { redactSecretFields, redactSecretHeaders } from './redact-secrets';

// Every line written inside a span names it, so a log line leads to its Jaeger trace and back.
function traceFields(): Record<string, string> {
  const sc = trace.getSpanContext(context.active());
  if (!sc || !isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/**
 * A JSON logger (pino) for a service or tool: `trace_id`/`span_id` of the active span on each
 * line, credentials redacted. Pass it to Fastify as `loggerInstance`. `destination` defaults to
 * stdout; tests give a stream they read back.
 */
export function createLogger(name: string, level = 'info', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    mixin: traceFields,
    redact: redactSecretHeaders,
    formatters: { log: redactSecretFields },
  };
  return destination ? pino(options, destination) : pino(options);
}
