import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export { SpanKind, type Span };

const tracer = () => trace.getTracer('@dw/telemetry');

export interface WithSpanOptions {
  kind?: SpanKind;
  /** Parent context, e.g. from `contextFromHeaders`; the active context when omitted. */
  parent?: Context;
  attributes?: Attributes;
}

/**
 * Runs `fn` inside a new active span (so logs, outgoing calls and queries made by `fn` belong to
 * it), marks the span failed with the exception when `fn` rejects, and always ends it.
 */
export function withSpan<T>(name: string, opts: WithSpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const { kind, parent, attributes } = opts;
  return tracer().startActiveSpan(name, { kind, attributes }, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      span.recordException(error);
      failSpan(span, error.message);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed (an error status) without an exception: a callback attempt that did not get its 200, say. */
export function failSpan(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
