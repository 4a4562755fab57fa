import { withSpan } from '@dw/telemetry';
import { installTestTracing } from '@dw/testing';
import { startTestService, type TestService } from '../support/service';

const tracing = installTestTracing();

const SETTLE_MS = 300;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('settler', { sandboxSettleMs: SETTLE_MS });
});
afterAll(async () => {
  await svc?.close();
  await tracing.uninstall();
});

let n = 0;
const create = async (amount: string) =>
  (
    await svc.as(svc.merchantA, {
      method: 'POST',
      url: '/api/createDeposit',
      payload: { amount, currency: 'USD', orderId: `settle-${++n}` },
    })
  ).json();

const statusOf = async (id: string) =>
  (await svc.as(svc.merchantA, { method: 'GET', url: `/api/transactions/${id}` })).json();

async function waitForFinal(id: string, timeoutMs = 5000) {
  const start = Date.now();
  for (;;) {
    const detail = await statusOf(id);
    if (detail.transaction.status !== 'pending') return { detail, afterMs: Date.now() - start };
    if (Date.now() - start > timeoutMs) throw new Error('not settled');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('sandbox settler (SANDBOX_SETTLE_MS)', () => {
  it('completes a pending transaction about SANDBOX_SETTLE_MS after creation, with a completed event', async () => {
    const tx = await create('10.00');
    const { detail } = await waitForFinal(tx.id);
    expect(detail.transaction.status).toBe('completed');
    const settledAfter = Date.parse(detail.transaction.updatedAt) - Date.parse(tx.createdAt);
    expect(settledAfter).toBeGreaterThanOrEqual(SETTLE_MS);
    expect(settledAfter).toBeLessThan(SETTLE_MS + 3000);
    expect(detail.events.map((e: { type: string }) => e.type)).toEqual(['deposit.pending', 'deposit.completed']);
  });

  it('continues the trace of the request that created the transaction: its settled event and outbox message carry that traceparent', async () => {
    let traceId = '';
    const created = await withSpan('merchant request', {}, (span) => {
      traceId = span.spanContext().traceId;
      return svc.as(svc.merchantA, { method: 'POST', url: '/api/createDeposit', payload: { amount: '7.00', currency: 'USD', orderId: `settle-${++n}` } });
    });
    expect(created.statusCode).toBe(201);
    const { detail } = await waitForFinal(created.json().id);
    const events = await svc.db.$queryRaw<{ type: string; traceparent: string | null }[]>`
      SELECT type, traceparent FROM transaction_events WHERE transaction_id = ${created.json().id}::uuid ORDER BY sequence`;
    expect(events.map((e) => e.type)).toEqual(['deposit.pending', detail.transaction.status === 'completed' ? 'deposit.completed' : 'deposit.failed']);
    for (const e of events) expect(e.traceparent).toContain(traceId);
    const [outboxed] = await svc.db.$queryRaw<{ headers: Record<string, unknown> }[]>`
      SELECT headers FROM outbox WHERE event_id = ${detail.events[1].id}`;
    if (outboxed) expect(String(outboxed.headers.traceparent)).toContain(traceId); // unless a relay published it already
  });

  it('fails a transaction whose amount fraction is exactly .66', async () => {
    const failed = await create('12.66');
    const alsoFailed = await create('3.660');
    const notFailed = await create('12.665');
    expect((await waitForFinal(failed.id)).detail.transaction.status).toBe('failed');
    expect((await waitForFinal(alsoFailed.id)).detail.transaction.status).toBe('failed');
    expect((await waitForFinal(notFailed.id)).detail.transaction.status).toBe('completed');
  });
});
