import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildFixtureApp, runFixtureApp, type ChildRun } from './support/child-app';

let dir: string;
beforeAll(() => {
  dir = buildFixtureApp();
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  // The shared tmp/ folder goes too, unless another run is still using it (then rmdir refuses).
  try {
    fs.rmdirSync(path.dirname(dir));
  } catch {
    /* not empty */
  }
});

const summaryOf = (run: ChildRun) =>
  run.lines.find((l) => l.summary) as { port: number; clientTraceId?: string; connections: number[]; httpPatched: boolean };
const logLine = (run: ChildRun, msg: string, path?: string) =>
  run.lines.find((l) => l.msg === msg && (path === undefined || l.path === path));

/** A stand-in OTLP/HTTP collector on localhost that keeps what it is sent. */
async function startCollector() {
  const received: { method?: string; url?: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, body });
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { received, url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('preloaded with --require and no OTLP endpoint', () => {
  let run: ChildRun;
  beforeAll(async () => {
    // OTEL_LOG_LEVEL makes the SDK print its own errors (a duplicate registration, a failed
    // export) to stderr, which must stay empty.
    run = await runFixtureApp(dir, { OTEL_LOG_LEVEL: 'warn' });
  });

  it('starts, serves, and exits 0 on its own (no handle keeps it alive)', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // A hang detector, not a speed check: an open exporter socket or timer would keep it alive
    // until the kill at 10 s (and the exit code would not be 0); a busy machine may take a few seconds.
    expect(run.elapsedMs).toBeLessThan(9500); // the child is killed at 10 s
    expect(summaryOf(run)).toBeDefined();
  });

  it('propagates traceparent over HTTP and puts the trace id in the logs of both sides, the spans unrecorded (sampled flag 00: nothing takes them)', () => {
    const { clientTraceId } = summaryOf(run);
    expect(clientTraceId).toMatch(/^[0-9a-f]{32}$/);
    expect(logLine(run, 'calling')).toMatchObject({ trace_id: clientTraceId });
    const handled = logLine(run, 'handled', '/work')!;
    expect(handled.incomingTraceparent).toMatch(new RegExp(`^00-${clientTraceId}-[0-9a-f]{16}-00$`));
    expect(handled.trace_id).toBe(clientTraceId);
    // The server's own span id, not the caller's: a step of its own in the trace.
    expect(handled.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(handled.incomingTraceparent).not.toContain(`-${handled.span_id}-`);
  });

  it('keeps the request\'s trace context past its body and into the hooks after the response (its log line)', () => {
    const { clientTraceId } = summaryOf(run);
    const handled = logLine(run, 'handled', '/body')!;
    expect(handled.incomingTraceparent).toMatch(new RegExp(`^00-${clientTraceId}-[0-9a-f]{16}-00$`));
    expect(handled.trace_id).toBe(clientTraceId);
    expect(logLine(run, 'responded', '/body')).toMatchObject({ trace_id: clientTraceId, span_id: handled.span_id });
    expect(logLine(run, 'responded', '/work')).toMatchObject({ trace_id: clientTraceId });
  });

  it('leaves the http instrumentation out: nothing records, so the server sets up each request\'s context itself', () => {
    // Node's http module, had the instrumentation patched it, would carry its symbol.
    expect(summaryOf(run).httpPatched).toBe(false);
  });

  it('does not trace health probes', () => {
    expect(logLine(run, 'handled', '/healthz')).not.toHaveProperty('trace_id');
    expect(logLine(run, 'responded', '/healthz')).not.toHaveProperty('trace_id');
  });

  it('opens no connection other than to the app itself (no collector, no metrics push)', () => {
    const { port, connections } = summaryOf(run);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.every((p) => p === port)).toBe(true);
  });
});

describe('preloaded with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  beforeEach(async () => {
    collector = await startCollector();
  });
  afterEach(() => collector.close());

  it('exports the spans over OTLP/HTTP by the time shutdownTelemetry resolves, named by OTEL_SERVICE_NAME', async () => {
    const run = await runFixtureApp(dir, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'svc-from-env',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=env-from-attrs',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const exports = collector.received.filter((r) => r.method === 'POST' && r.url === '/v1/traces');
    expect(exports.length).toBeGreaterThan(0);
    const sent = exports.map((r) => r.body).join('\n');
    expect(sent).toContain('fixture.client');
    expect(sent).toContain(summaryOf(run).clientTraceId);
    expect(sent).toContain('svc-from-env');
    expect(sent).toContain('env-from-attrs');
    expect(sent).toContain('/work');
    expect(sent).not.toContain('/healthz');
    // Exported, so recorded: the sampled flag says so downstream.
    expect(logLine(run, 'handled', '/work')!.incomingTraceparent).toMatch(new RegExp(`^00-${summaryOf(run).clientTraceId}-[0-9a-f]{16}-01$`));
    // Recorded, so the http instrumentation makes the server spans (and the context past the body).
    expect(summaryOf(run).httpPatched).toBe(true);
    expect(logLine(run, 'handled', '/body')).toMatchObject({ trace_id: summaryOf(run).clientTraceId });
  });

  it('samples as OTEL_TRACES_SAMPLER says: always_off exports nothing, yet ids still reach headers and logs', async () => {
    const run = await runFixtureApp(dir, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'always_off' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(collector.received).toEqual([]);
    const { clientTraceId } = summaryOf(run);
    expect(clientTraceId).toMatch(/^[0-9a-f]{32}$/);
    expect(logLine(run, 'handled', '/work')!.incomingTraceparent).toMatch(new RegExp(`^00-${clientTraceId}-[0-9a-f]{16}-00$`));
  });

  it('exports nothing and adds no trace ids when OTEL_SDK_DISABLED=true', async () => {
    const run = await runFixtureApp(dir, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' });
    expect(run.code).toBe(0);
    expect(collector.received).toEqual([]);
    expect(summaryOf(run).clientTraceId).toBeUndefined();
    expect(logLine(run, 'calling')).not.toHaveProperty('trace_id');
  });
});

describe('preloaded with no OTLP endpoint but a sampler of the operator\'s', () => {
  it('samples as OTEL_TRACES_SAMPLER says (always_on: recorded, sampled flag 01), exporting nothing', async () => {
    const run = await runFixtureApp(dir, { OTEL_TRACES_SAMPLER: 'always_on' });
    expect(run.code).toBe(0);
    expect(logLine(run, 'handled', '/work')!.incomingTraceparent).toMatch(new RegExp(`^00-${summaryOf(run).clientTraceId}-[0-9a-f]{16}-01$`));
    expect(summaryOf(run).connections.every((p: number) => p === summaryOf(run).port)).toBe(true);
  });
});

describe('preloaded with OTEL_PROPAGATORS=none', () => {
  it('sends no trace headers when OTEL_PROPAGATORS=none', async () => {
    const run = await runFixtureApp(dir, { OTEL_PROPAGATORS: 'none' });
    expect(run.code).toBe(0);
    const handled = logLine(run, 'handled', '/work')!;
    expect(handled.incomingTraceparent).toBeUndefined();
    expect(handled.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(handled.trace_id).not.toBe(summaryOf(run).clientTraceId);
  });
});
