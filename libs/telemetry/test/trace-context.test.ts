import { context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { contextFromHeaders, currentTraceId, currentTraceparent, injectTraceHeaders, withSpan } from '@dw/telemetry';
import { installTestTracing } from '@dw/testing';

const tracing = installTestTracing();
afterAll(() => tracing.uninstall());
beforeEach(() => tracing.exporter.reset());

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('carrying trace context through message headers', () => {
  it('continues the same trace from headers injected by the producer', async () => {
    const headers: Record<string, unknown> = {};
    const producer = await withSpan('publish', { kind: SpanKind.PRODUCER }, async (span) => {
      injectTraceHeaders(headers);
      return span.spanContext();
    });
    expect(headers.traceparent).toMatch(TRACEPARENT);

    await withSpan('consume', { kind: SpanKind.CONSUMER, parent: contextFromHeaders(headers) }, async () => undefined);

    const consumer = tracing.exporter.getFinishedSpans().find((s) => s.name === 'consume')!;
    expect(consumer.spanContext().traceId).toBe(producer.traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanId);
  });

  it('reads traceparent and tracestate given as Buffers, as amqplib delivers them', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const headers = {
      traceparent: Buffer.from(`00-${traceId}-${parentSpanId}-01`),
      tracestate: Buffer.from('vendor=abc'),
    };
    await withSpan('consume', { parent: contextFromHeaders(headers) }, async () => undefined);

    const [span] = tracing.exporter.getFinishedSpans();
    expect(span!.spanContext().traceId).toBe(traceId);
    expect(span!.parentSpanContext?.spanId).toBe(parentSpanId);
    expect(span!.spanContext().traceState?.get('vendor')).toBe('abc');
  });

  it('injects the context it is given rather than the active one', async () => {
    const headers: Record<string, unknown> = {};
    const stored = await withSpan('request', {}, async () => context.active());
    injectTraceHeaders(headers, stored);
    const requestSpan = tracing.exporter.getFinishedSpans()[0]!;
    expect(headers.traceparent).toBe(`00-${requestSpan.spanContext().traceId}-${requestSpan.spanContext().spanId}-01`);
  });

  it.each([
    ['undefined', undefined],
    ['an empty object', {}],
    ['a malformed traceparent', { traceparent: '00-nothex-zz-01' }],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }],
    ['a number', { traceparent: 42 }],
    ['a nested object', { traceparent: { evil: true } }],
    ['a non-object carrier', 'traceparent' as unknown as Record<string, unknown>],
  ])('starts a new trace when the headers are %s', async (_label, headers) => {
    const ctx = contextFromHeaders(headers);
    expect(trace.getSpanContext(ctx)).toBeUndefined();
    expect(ctx).toBe(ROOT_CONTEXT);
    const span = await withSpan('consume', { parent: ctx }, async (s) => s);
    expect(tracing.exporter.getFinishedSpans()[0]!.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('accepts header names in any case', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const ctx = contextFromHeaders({ TraceParent: `00-${traceId}-b7ad6b7169203331-01` });
    expect(trace.getSpanContext(ctx)?.traceId).toBe(traceId);
  });
});

describe('currentTraceparent and currentTraceId', () => {
  it('describe the active span inside withSpan', async () => {
    const seen = await withSpan('work', {}, async (span) => ({
      traceparent: currentTraceparent(),
      traceId: currentTraceId(),
      own: span.spanContext(),
    }));
    expect(seen.traceparent).toBe(`00-${seen.own.traceId}-${seen.own.spanId}-01`);
    expect(seen.traceId).toBe(seen.own.traceId);
  });

  it('are undefined outside any span', () => {
    expect(currentTraceparent()).toBeUndefined();
    expect(currentTraceId()).toBeUndefined();
  });

  it('round-trip: a stored traceparent read back as headers continues the trace', async () => {
    const stored = await withSpan('create', {}, async () => currentTraceparent());
    const resumed = await withSpan('relay', { parent: contextFromHeaders({ traceparent: stored }) }, async () =>
      currentTraceId(),
    );
    expect(stored).toContain(resumed);
  });
});
