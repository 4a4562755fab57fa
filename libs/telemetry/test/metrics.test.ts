import { Counter } from 'prom-client';
import { httpRequestDuration, metricsRegistry, renderMetrics } from '@dw/telemetry';

describe('renderMetrics', () => {
  it('returns Prometheus text with the HTTP duration histogram and process metrics', async () => {
    httpRequestDuration.observe({ method: 'POST', route: '/api/createDeposit', status_code: '201' }, 0.042);
    const { contentType, body } = await renderMetrics();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# TYPE http_server_request_duration_seconds histogram');
    expect(body).toMatch(
      /http_server_request_duration_seconds_bucket\{le="0\.05",method="POST",route="\/api\/createDeposit",status_code="201"\} 1/,
    );
    expect(body).toContain('process_cpu_user_seconds_total');
    expect(body).toContain('process_resident_memory_bytes');
    expect(body).toContain('nodejs_eventloop_lag_seconds');
  });

  it('includes metrics other code registers in metricsRegistry', async () => {
    const counter = new Counter({ name: 'test_outbox_published_total', help: 'test', registers: [metricsRegistry] });
    counter.inc(3);
    expect((await renderMetrics()).body).toContain('test_outbox_published_total 3');
  });
});
