import { startTestService, type TestService } from '../support/service';

const SETTLE_MS = 300;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('settler', { sandboxSettleMs: SETTLE_MS });
});
afterAll(async () => svc?.close());

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

  it('fails a transaction whose amount fraction is exactly .66', async () => {
    const failed = await create('12.66');
    const alsoFailed = await create('3.660');
    const notFailed = await create('12.665');
    expect((await waitForFinal(failed.id)).detail.transaction.status).toBe('failed');
    expect((await waitForFinal(alsoFailed.id)).detail.transaction.status).toBe('failed');
    expect((await waitForFinal(notFailed.id)).detail.transaction.status).toBe('completed');
  });
});
