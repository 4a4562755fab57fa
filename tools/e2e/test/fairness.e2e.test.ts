/**
 * docs/callbacks.md, fair delivery, end to end with the four real processes: merchant A's endpoint hangs
 * (or is slow, or refuses at once) while A creates 300 deposits in a burst; merchant B then creates
 * 60 deposits at 10 a second. Every B deposit.pending arrives within 2 s of its 201, and A is still
 * served within its own share. The callback timeout is scaled from 15 s to 5 s; the retry waits
 * are the production ones.
 *
 * A recovery is the largest burst a merchant can cause at will (10,000 events a call): it runs in a
 * lane of its own, so it never stands in front of other merchants' new callbacks, even while the
 * merchant's endpoint has just turned slow and is not yet judged so.
 */
import { startCallbackReceiver, type CallbackReceiver, type Reaction, type ReceivedCallback } from '@dw/testing';
import { api, skippedDeliveries, startStack, type Merchant, type Stack } from './support/stack';

let stack: Stack;
let receiver: CallbackReceiver;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  stack = await startStack('fairness', { CALLBACK_TIMEOUT_MS: '5000', RATE_LIMIT_PER_SECOND: '100000' });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pendingTo = (path: string) => (r: ReceivedCallback) => r.path === path && r.json?.type === 'deposit.pending';

async function merchantWithUrl(name: string, path: string): Promise<Merchant> {
  const m = stack.createMerchant(name);
  const res = await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}${path}` });
  expect(res.status).toBe(200);
  return m;
}

async function burst(m: Merchant, count: number, concurrency: number, tag: string): Promise<void> {
  const call = api(stack, m.apiToken);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const res = await call('POST', '/api/createDeposit', { amount: '1.00', currency: 'USD', orderId: `${tag}-${i}` });
        expect(res.status).toBe(201);
      }
    }),
  );
}

/** B creates `count` deposits at 10 a second; resolves with each one's 201 → callback delay, sorted. */
async function probeB(b: Merchant, tag: string, count: number): Promise<number[]> {
  const callB = api(stack, b.apiToken);
  const createdAt = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const res = await callB('POST', '/api/createDeposit', { amount: '2.00', currency: 'USD', orderId: `b-${tag}-${i}` });
    expect(res.status).toBe(201);
    createdAt.set(res.json.id, Date.now());
    await sleep(Math.max(0, 100 - (Date.now() - started)));
  }
  const got = await receiver.waitFor(count, pendingTo(`/b-${tag}`), 10_000);
  return got.map((r) => r.at - createdAt.get(r.json.data.id)!).sort((x, y) => x - y);
}

describe.each<[string, Reaction]>([
  ['hangs', 'hang'],
  ['is slow (200 after 2 s)', { status: 200, afterMs: 2000 }],
  ['answers 503 at once', 503],
  ['answers 429 at once', 429],
])('merchant A’s endpoint %s', (label, reaction) => {
  it('every one of B’s 60 deposits is called back within 2 s of its 201, and A is still served', async () => {
    const tag = label.replace(/\W+/g, '-');
    const a = await merchantWithUrl(`A ${label}`, `/a-${tag}`);
    const b = await merchantWithUrl(`B ${label}`, `/b-${tag}`);
    receiver.respond = (r) => (r.path === `/a-${tag}` ? reaction : 200);

    await burst(a, 300, 50, `a-${tag}`);
    const delays = await probeB(b, tag, 60);
    expect(delays[delays.length - 1]).toBeLessThan(2000);

    // A is served meanwhile, within its own share: its attempts go on.
    await receiver.waitFor(10, pendingTo(`/a-${tag}`), 15_000);
  }, 90_000);
});

describe('merchant A recovers 2,500 callbacks to an endpoint that has just turned slow (200 after 2 s)', () => {
  it('B’s deposits created meanwhile are each called back within 1 s of their 201, and A’s recovery goes on', async () => {
    const a = stack.createMerchant('A recovering');
    const b = await merchantWithUrl('B beside a recovery', '/b-recovery');
    receiver.respond = (r) => (r.path === '/a-recovery' ? { status: 200, afterMs: 2000 } : 200);
    const since = new Date(Date.now() - 60_000).toISOString();

    // A has no callback URL yet: each of its 2,500 deliveries ends skipped, which recovery restarts.
    await burst(a, 2500, 50, 'a-recovery');
    expect(await skippedDeliveries(stack, a.merchantId, 2500)).toBe(2500);
    const callA = api(stack, a.apiToken);
    expect((await callA('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/a-recovery` })).status).toBe(200);

    const probe = probeB(b, 'recovery', 60);
    await sleep(1000);
    const recovered = await callA('POST', '/api/recoverCallbacks', { since });
    expect(recovered.status).toBe(202);
    expect(recovered.json.recovered).toBe(2500);
    const delays = await probe;
    expect(delays[delays.length - 1]).toBeLessThan(1000);

    await receiver.waitFor(10, pendingTo('/a-recovery'), 15_000);
  }, 180_000);
});
