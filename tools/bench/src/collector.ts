/**
 * A tiny OTLP/HTTP (JSON) trace collector: the services export their spans here when the profile
 * scenario points OTEL_EXPORTER_OTLP_ENDPOINT at it. Keeps every span's service, name, trace id,
 * parent, start and duration; the profile groups them per trace.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpanRecord {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startMs: number;
  durationMs: number;
}

const nanosToMs = (n: string | number) => Number(BigInt(n) / 1000n) / 1000;

export async function startCollector() {
  const spans: SpanRecord[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          const attr = (rs.resource?.attributes ?? []).find((a: any) => a.key === 'service.name');
          const service = attr?.value?.stringValue ?? '?';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const startMs = nanosToMs(s.startTimeUnixNano);
              spans.push({
                service,
                name: s.name,
                kind: s.kind ?? 0,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                startMs,
                durationMs: nanosToMs(s.endTimeUnixNano) - startMs,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
