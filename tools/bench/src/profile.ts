/**
 * Figure 8: where a create's time goes. A stack exports its spans (OTLP/HTTP JSON) to the bench's
 * collector while it takes a steady 50 creates/s; spans are grouped per trace (the trace context
 * travels with the event through the outbox, RabbitMQ and the callback) and summarised per
 * service and span name. The product's telemetry is used as shipped; only the export endpoint and
 * the batch processor's size/delay are set so no span is dropped.
 */
import { startCollector, type SpanRecord } from './collector';
import { merchantWithCallback, sleep, startBenchStack, type Ctx, type Row } from './context';
import { gatewayClient } from './load';
import { fmt, percentile } from './stats';

export async function profileFigure(ctx: Ctx): Promise<{ rows: Row[]; spans: string }> {
  const seconds = ctx.opts.quick ? 4 : 10;
  const collector = await startCollector();
  const stack = await startBenchStack('profile', {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BSP_MAX_QUEUE_SIZE: '100000',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2000',
  });
  const client = gatewayClient(stack.gateway);
  try {
    const m = await merchantWithCallback(stack, '/ok/profile');
    await client.steady(m.apiToken, 50, 2); // warm-up, then forget its spans
    await ctx.receiver.waitForIds('profile', 100, 30_000);
    await sleep(1500);
    collector.spans.length = 0;
    ctx.log(`profile: 50 creates/s for ${seconds} s with tracing exported to the bench`);
    const { created } = await client.steady(m.apiToken, 50, seconds);
    await ctx.receiver.waitForIds('profile', 100 + created.length, 30_000);
    await sleep(3000); // the batch processors' last exports
    return summarise([...collector.spans], created.length);
  } finally {
    await client.close();
    await stack.close();
    await collector.close();
  }
}

function summarise(spans: SpanRecord[], creates: number): { rows: Row[]; spans: string } {
  // Every span name per service, with its p50/p99 and how many per create.
  const groups = new Map<string, number[]>();
  for (const s of spans) {
    // Names carry the stack's own database and AMQP prefix; drop them so the list reads the same each run.
    const key = `${s.service} ${s.name.replace(/dw_e2e_\w+/g, '<db>').replace(/test\.e2e\.\w+\.[0-9a-f]{8}\./g, '<prefix>.')}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(s.durationMs);
  }
  const lines = [...groups.entries()]
    .map(([key, d]) => ({ key, n: d.length, p50: percentile(d, 50), p99: percentile(d, 99) }))
    .sort((x, y) => y.p50 * y.n - x.p50 * x.n)
    .map((g) => `${g.key.padEnd(70)} ${String(g.n).padStart(6)} spans  ${(g.n / creates).toFixed(2).padStart(5)}/create  p50 ${fmt(g.p50).padStart(6)} ms  p99 ${fmt(g.p99).padStart(6)} ms`);
  const rows = stages(spans).map(([stage, values, how]) => ({
    figure: `Profile: ${stage}`,
    ours: `p50 ${fmt(percentile(values, 50))} ms`,
    oursLatency: `${fmt(percentile(values, 50))} / ${fmt(percentile(values, 99))}`,
    note: `${how} (${values.length} traces)`,
  }));
  return { rows, spans: lines.join('\n') };
}

type Stage = [name: string, values: number[], how: string];

/** Per trace: the stages of one create, from the spans each service records. */
function stages(spans: SpanRecord[]): Stage[] {
  const byTrace = new Map<string, SpanRecord[]>();
  for (const s of spans) {
    if (!byTrace.has(s.traceId)) byTrace.set(s.traceId, []);
    byTrace.get(s.traceId)!.push(s);
  }
  const out: Record<string, number[]> = { gateway: [], validation: [], database: [], relay: [], delivery: [], total: [] };
  const SERVER = 2;
  const CLIENT = 3;
  const PRODUCER = 4;
  const CONSUMER = 5;
  for (const trace of byTrace.values()) {
    const gw = trace.find((s) => s.service === 'api-gateway' && s.kind === SERVER && !s.parentSpanId);
    const tx = trace.find((s) => s.service === 'transactions-svc' && s.kind === SERVER);
    if (!gw || !tx || !/createDeposit|POST/i.test(gw.name)) continue;
    // Database time: the create's `insert transaction` span (its wait for and share of a group-committed
    // batch) and any query spans of its own (a replay's lookup).
    const db = trace.filter(
      (s) => s.service === 'transactions-svc' && (s.kind === CLIENT || s.name === 'insert transaction') && s.startMs >= tx.startMs && s.startMs <= tx.startMs + tx.durationMs,
    );
    const dbMs = db.reduce((sum, s) => sum + s.durationMs, 0);
    out.gateway!.push(gw.durationMs - tx.durationMs);
    // A trace whose database spans were not exported says nothing about the database stage.
    if (db.length) {
      out.database!.push(dbMs);
      out.validation!.push(Math.max(0, tx.durationMs - dbMs));
    }
    const publish = trace.filter((s) => s.service === 'transactions-svc' && s.kind === PRODUCER).sort((a, b) => a.startMs - b.startMs)[0];
    const txEnd = tx.startMs + tx.durationMs;
    if (publish) out.relay!.push(publish.startMs + publish.durationMs - txEnd);
    const consume = trace.filter((s) => s.service === 'callback-svc' && s.kind === CONSUMER).sort((a, b) => a.startMs - b.startMs)[0];
    const post = trace.filter((s) => s.service === 'callback-svc' && s.kind === CLIENT && /POST/.test(s.name)).sort((a, b) => a.startMs - b.startMs)[0];
    if (publish && post) out.delivery!.push(post.startMs + post.durationMs - (publish.startMs + publish.durationMs));
    if (post) out.total!.push(post.startMs + post.durationMs - gw.startMs);
    void consume;
  }
  return [
    ['gateway (own time)', out.gateway!, 'gateway server span minus the transactions-svc server span'],
    ['validation + service code', out.validation!, 'transactions-svc server span minus its database time'],
    ['database', out.database!, 'transactions-svc `insert transaction` span (wait for and run its batch) plus its own query spans'],
    ['relay (commit → published)', out.relay!, 'end of the request to the end of the first publish span'],
    ['delivery (published → callback answered)', out.delivery!, 'end of publish to the end of the callback POST span'],
    ['total (request → callback answered)', out.total!, 'start of the gateway span to the end of the callback POST'],
  ];
}
