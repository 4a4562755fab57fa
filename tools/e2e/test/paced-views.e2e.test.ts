/**
 * A merchant's viewer answers pass through the gateway at its pace (docs/api.md, "Fair use"):
 * beyond a burst of GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND, at that many bytes a second, whole,
 * while another merchant's answers go at once. Scaled down here to 256 KiB a second so that a page
 * and a CSV of 40 of the largest rows the API admits (about 42 KB each) take seconds; the product's
 * default is 8 MiB.
 */
import { api, startStack, type Merchant, type Stack } from './support/stack';
import { largestDeposits } from './support/seed-history';

const PACE = 256 * 1024;
const ROWS = 40;

let stack: Stack;
let a: Merchant;
let b: Merchant;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  stack = await startStack('paced_views', { GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND: String(PACE) });
  a = stack.createMerchant('Large rows');
  b = stack.createMerchant('Small rows');
  await largestDeposits(stack, a, ROWS);
  expect((await api(stack, b.apiToken)('POST', '/api/createDeposit', { amount: '2.00', currency: 'USD', orderId: 'small-0' })).status).toBe(201);
}, 120_000);
afterAll(async () => stack?.close());

async function timed(who: Merchant, query: string, accept: string) {
  const started = performance.now();
  const res = await fetch(`${stack.gateway}/ui/viewTransaction?${query}`, { headers: { serviceApiToken: who.apiToken, accept } });
  const text = await res.text();
  return { status: res.status, text, bytes: Buffer.byteLength(text), seconds: (performance.now() - started) / 1000 };
}

/** The least time `bytes` can take at the pace, starting from a full burst. */
const leastSeconds = (bytes: number) => (bytes - PACE) / PACE;

it("passes a merchant's page beyond its burst at its pace, whole, while another merchant's page is answered at once", async () => {
  await sleep(1500); // a full burst
  const [large, small] = await Promise.all([
    timed(a, 'limit=20', 'application/json'),
    sleep(300).then(() => timed(b, 'limit=20', 'application/json')),
  ]);
  expect(large.status).toBe(200);
  expect(JSON.parse(large.text).items).toHaveLength(20);
  expect(large.bytes).toBeGreaterThan(3 * PACE);
  expect(large.seconds).toBeGreaterThanOrEqual(0.9 * leastSeconds(large.bytes));
  // B's answer did not wait behind A's pace: it came while A's was still going out.
  expect(small.status).toBe(200);
  expect(JSON.parse(small.text).items.map((t: { orderId: string }) => t.orderId)).toEqual(['small-0']);
  expect(small.seconds).toBeLessThan(large.seconds - 0.3);
}, 60_000);

it("passes a merchant's CSV download at the same pace, every row of it", async () => {
  await sleep(1500);
  const csv = await timed(a, '', 'text/csv');
  expect(csv.status).toBe(200);
  expect(csv.text.trim().split('\n')).toHaveLength(ROWS + 1);
  expect(csv.seconds).toBeGreaterThanOrEqual(0.9 * leastSeconds(csv.bytes));
}, 60_000);
