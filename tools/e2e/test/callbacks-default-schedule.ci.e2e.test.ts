/**
 * The real retry schedule (5, 10, 20, 40, 80 s; about 155 s in all) against the real stack. It
 * runs where CI=true (`.ci/run` sets it) and is skipped in a developer's `npm test` for its length;
 * run it locally with `CI=true npx jest callbacks-default-schedule` in tools/e2e.
 */
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { api, startStack, type Stack } from './support/stack';

const SCHEDULE_S = [5, 10, 20, 40, 80];
const inCi = process.env.CI === 'true' ? describe : describe.skip;

inCi('the default retry schedule (CI only)', () => {
  let stack: Stack;
  let receiver: CallbackReceiver;
  beforeAll(async () => {
    receiver = await startCallbackReceiver();
    receiver.respond = () => 503;
    stack = await startStack('schedule', {}); // CALLBACK_RETRY_DELAYS_MS and CALLBACK_TIMEOUT_MS at their defaults
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it('retries after 5, 10, 20, 40 and 80 s, each within +1 s, then marks the delivery failed', async () => {
    const m = stack.createMerchant('Schedule');
    const call = api(stack, m.apiToken);
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/cb` });
    const tx = (await call('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: 'schedule-1' })).json;
    const got = await receiver.waitFor(6, (r) => r.json?.data?.id === tx.id, 175_000);
    const waits = got.slice(1).map((r, i) => (r.at - got[i]!.at) / 1000);
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(SCHEDULE_S[i]! - 0.05);
      expect(w).toBeLessThanOrEqual(SCHEDULE_S[i]! + 1);
    });
    await new Promise((r) => setTimeout(r, 1000));
    const v = (await call('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' })).json;
    expect(v.events[0].delivery.status).toBe('failed');
    expect(v.events[0].delivery.attempts).toHaveLength(6);
  }, 200_000);
});
