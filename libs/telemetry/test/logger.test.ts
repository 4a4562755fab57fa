import { createLogger, withSpan } from '@dw/telemetry';
import { collectLines } from './support/collect-lines';
import { installTestTracing } from '@dw/testing';

const tracing = installTestTracing();
afterAll(() => tracing.uninstall());

describe('createLogger: trace correlation', () => {
  it('writes the active span’s trace_id and span_id on lines logged inside it', async () => {
    const { lines, stream } = collectLines();
    const log = createLogger('test', 'info', stream);
    const ids = await withSpan('handle', {}, async (span) => {
      log.info('inside');
      return span.spanContext();
    });
    expect(lines[0]).toMatchObject({ msg: 'inside', name: 'test', trace_id: ids.traceId, span_id: ids.spanId });
  });

  it('keeps the fields on child loggers (as Fastify creates per request)', async () => {
    const { lines, stream } = collectLines();
    const child = createLogger('test', 'info', stream).child({ reqId: 'r-1' });
    const traceId = await withSpan('handle', {}, async (span) => {
      child.info('child line');
      return span.spanContext().traceId;
    });
    expect(lines[0]).toMatchObject({ reqId: 'r-1', trace_id: traceId });
  });

  it('adds no trace fields outside a span', () => {
    const { lines, stream } = collectLines();
    createLogger('test', 'info', stream).info('outside');
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[0]).not.toHaveProperty('span_id');
  });

  it('honours the level it is given', () => {
    const { lines, stream } = collectLines();
    const log = createLogger('test', 'warn', stream);
    log.info('dropped');
    log.warn('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });
});

describe('createLogger: redaction', () => {
  const secrets = {
    serviceapitoken: 'tok-lower',
    serviceApiToken: 'tok-camel',
    servicetoken: 'tok-short',
    'x-admin-token': 'admin-secret',
    'X-Admin-Token': 'admin-secret-2',
    authorization: 'Bearer abc',
    Authorization: 'Bearer def',
  };

  it.each([
    ['req.headers', (h: object) => ({ req: { headers: h } })],
    ['request.headers', (h: object) => ({ request: { headers: h } })],
    ['headers', (h: object) => ({ headers: h })],
    ['top-level fields', (h: object) => h],
  ])('hides token headers in %s, in any spelling, and keeps the rest', (_where, wrap) => {
    const { lines, stream } = collectLines();
    createLogger('test', 'info', stream).info(wrap({ ...secrets, 'content-type': 'application/json' }), 'req');
    const text = JSON.stringify(lines[0]);
    for (const value of Object.values(secrets)) expect(text).not.toContain(value);
    expect(text).toContain('[Redacted]');
    expect(text).toContain('application/json');
  });

  it('does not alter the object that was logged', () => {
    const { stream } = collectLines();
    const headers = { serviceapitoken: 'tok' };
    createLogger('test', 'info', stream).info({ req: { headers } });
    expect(headers.serviceapitoken).toBe('tok');
  });
});
