import { diag, type TextMapPropagator } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { envList } from './env-list';

const SUPPORTED: Record<string, () => TextMapPropagator> = {
  tracecontext: () => new W3CTraceContextPropagator(),
  baggage: () => new W3CBaggagePropagator(),
};

/**
 * The propagator OTEL_PROPAGATORS asks for, read as @opentelemetry/sdk-node read it: unset or
 * empty → undefined (start-telemetry.ts registers defaultPropagator()); `none`
 * anywhere → null (no propagator: nothing injected or extracted); otherwise the named ones,
 * deduplicated, in order. Only `tracecontext` and `baggage` are supported: `b3`, `b3multi` and
 * `jaeger` (which sdk-node's own propagator packages provided) and any other name are skipped with
 * a warning, and a list with no supported name leaves propagation off (null), as sdk-node did for
 * names it did not know.
 */
export function propagatorFromEnv(env: NodeJS.ProcessEnv = process.env): TextMapPropagator | null | undefined {
  const names = [...new Set(envList(env.OTEL_PROPAGATORS))];
  if (names.length === 0) return undefined;
  if (names.includes('none')) return null;
  const propagators: TextMapPropagator[] = [];
  for (const name of names) {
    const create = SUPPORTED[name];
    if (create) propagators.push(create());
    else diag.warn(`OTEL_PROPAGATORS: "${name}" is not supported by @dw/telemetry (only tracecontext, baggage, none)`);
  }
  if (propagators.length === 0) return null;
  return propagators.length === 1 ? propagators[0]! : new CompositePropagator({ propagators });
}

/** W3C tracecontext + baggage: what an unset OTEL_PROPAGATORS means. */
export function defaultPropagator(): TextMapPropagator {
  return new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });
}
