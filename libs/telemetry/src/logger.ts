import { pino, type DestinationStream, type Logger, type LoggerOptions as PinoOptions } from 'pino';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { redactSecretFields, redactSecretHeaders } from './redact-secrets';

// Every line written inside a span names it, so a log line leads to its Jaeger trace and back.
function traceFields(): Record<string, string> {
  const sc = trace.getSpanContext(context.active());
  if (!sc || !isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

export interface LoggerOptions {
  /**
   * Messages a library logs that the service reports in its own words instead (the gateway's
   * forwarding library logs every upstream failure with its stack, beside the gateway's own line):
   * dropped whatever their level.
   */
  dropMessages?: readonly string[];
}

/**
 * A JSON logger (pino) for a service or tool: `trace_id`/`span_id` of the active span on each
 * line, credentials redacted. Pass it to Fastify as `loggerInstance`. `destination` defaults to
 * stdout; tests give a stream they read back.
 */
export function createLogger(name: string, level = 'info', destination?: DestinationStream, { dropMessages = [] }: LoggerOptions = {}): Logger {
  const dropped = new Set(dropMessages);
  const options: PinoOptions = {
    name,
    level,
    mixin: traceFields,
    redact: redactSecretHeaders,
    formatters: { log: redactSecretFields },
  };
  if (dropped.size > 0) {
    options.hooks = {
      logMethod(args, method) {
        if (typeof args[1] === 'string' && dropped.has(args[1])) return;
        method.apply(this, args);
      },
    };
  }
  return destination ? pino(options, destination) : pino(options);
}
