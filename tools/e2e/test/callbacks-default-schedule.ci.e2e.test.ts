/**
 * The real retry schedule (5, 10, 20, 40, 80 s; about 155 s in all) against the real stack. It
 * runs where CI=true (`.ci/run` sets it) and is skipped in a developer's `npm test` for its length;
 * run it locally with `CI=true npx jest callbacks-default-schedule` in tools/e2e. Beside it, in the
 * same minutes, a merchant whose endpoint never answers gets the same waits after each 15 s timeout
 * for 12 callbacks at once (docs/callbacks.md, "The retry waits stay exact").
 */
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { api, startStack, type Stack } from './support/stack';

const SCHEDULE_S = [5, 10, 20, 40, 80];
const TIMEOUT_S = 15;
const HANGING = 12;
const inCi = process.env.CI === 'true' ? describe : describe.skip;

inCi('the default retry schedule (CI only)', () => {
  let stack: Stack;
  let receiver: CallbackReceiver;
  const hanging: string[] = [];
  let hangingToken: string;
  beforeAll(async () => {
    receiver = await startCallbackReceiver();
    receiver.respond = (r) => (r.path === '/hang' ? 'hang' : 503);
    stack = await startStack('schedule', {}); // CALLBACK_RETRY_DELAYS_MS and CALLBACK_TIMEOUT_MS at their defaults
    // The hanging merchant's attempts run while the first test waits out its schedule.
    const m = stack.createMerchant('Hanging');
    hangingToken = m.apiToken;
    const call = api(stack, m.apiToken);
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/hang` });
    for (let i = 0; i < HANGING; i++) hanging.push((await call('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: `hang-${i}` })).json.id);
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

  it(`gives each of ${HANGING} callbacks to an endpoint that never answers a 15 s timeout, then 5, 10, 20 and 40 s before its next attempt, each within +1 s`, async () => {
    // Attempt 5 of each starts 15 + 5 + 15 + 10 + 15 + 20 + 15 + 40 = 135 s after its first.
    for (const id of hanging) await receiver.waitFor(5, (r) => r.json?.data?.id === id, 60_000);
    const call = api(stack, hangingToken);
    for (const id of hanging) {
      // The attempts as the merchant's viewer shows them: each one's start and how long it waited.
      const v = (await call('GET', `/ui/viewTransaction?id=${id}`, undefined, { accept: 'application/json' })).json;
      const attempts: Array<{ at: string; durationMs: number; statusCode: number | null; error: string | null }> = v.events[0].delivery.attempts;
      expect(attempts.length).toBeGreaterThanOrEqual(5);
      for (const [i, a] of attempts.slice(0, 5).entries()) {
        expect(a).toMatchObject({ statusCode: null, error: expect.stringMatching(/timeout/) });
        expect(a.durationMs).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 5);
        expect(a.durationMs).toBeLessThan(TIMEOUT_S * 1000 + 1000);
        if (i === 4) break;
        const wait = (Date.parse(attempts[i + 1]!.at) - Date.parse(a.at) - a.durationMs) / 1000;
        expect(wait).toBeGreaterThanOrEqual(SCHEDULE_S[i]! - 0.05);
        expect(wait).toBeLessThanOrEqual(SCHEDULE_S[i]! + 1);
      }
    }
  }, 120_000);
});
