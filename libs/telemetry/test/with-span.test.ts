import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { withSpan } from '@dw/telemetry';
import { installTestTracing } from '@dw/testing';

const tracing = installTestTracing();
afterAll(() => tracing.uninstall());
beforeEach(() => tracing.exporter.reset());

describe('withSpan', () => {
  it('runs fn in a new active span with the given kind and attributes, and ends it', async () => {
    const result = await withSpan(
      'deliver',
      { kind: SpanKind.CLIENT, attributes: { 'callback.attempt': 2 } },
      async (span) => {
        expect(trace.getActiveSpan()).toBe(span);
        return 'ok';
      },
    );
    expect(result).toBe('ok');
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span!.name).toBe('deliver');
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(span!.attributes['callback.attempt']).toBe(2);
    expect(span!.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('nests under the span that is active when it is called', async () => {
    await withSpan('outer', {}, () => withSpan('inner', {}, async () => undefined));
    const spans = tracing.exporter.getFinishedSpans();
    const outer = spans.find((s) => s.name === 'outer')!;
    const inner = spans.find((s) => s.name === 'inner')!;
    expect(inner.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  });

  it('records the exception, sets error status, ends the span and rethrows', async () => {
    const failure = new Error('merchant endpoint timed out');
    await expect(withSpan('deliver', {}, async () => Promise.reject(failure))).rejects.toBe(failure);
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'merchant endpoint timed out' });
    expect(span!.events.map((e) => e.name)).toContain('exception');
    expect(span!.events[0]!.attributes?.['exception.message']).toBe('merchant endpoint timed out');
  });

  it('copes with a thrown non-Error value', async () => {
    await expect(withSpan('odd', {}, async () => Promise.reject('just a string'))).rejects.toBe('just a string');
    expect(tracing.exporter.getFinishedSpans()[0]!.status.code).toBe(SpanStatusCode.ERROR);
  });
});
