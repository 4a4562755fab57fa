/**
 * Callbacks (docs/callbacks.md) end to end: outbox relay → RabbitMQ → callback-svc → a real receiver on
 * 127.0.0.1, with short retry delays (the real schedule runs in callbacks-default-schedule.ci.e2e.test.ts).
 */
import { Webhook } from 'standardwebhooks';
import { startCallbackReceiver, startTcpProxy, type CallbackReceiver, type ReceivedCallback, type TcpProxy } from '@dw/testing';
import { ADMIN_TOKEN, api, eventually, startStack, type Merchant, type Stack, withDatabase } from './support/stack';

const DELAYS = [600, 1200, 1800, 2400, 3000];
let stack: Stack;
let receiver: CallbackReceiver;
let amqpProxy: TcpProxy;
let merchant: Merchant;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  amqpProxy = await startTcpProxy('127.0.0.1', 5672);
  stack = await startStack('callbacks', {
    AMQP_URL: `amqp://guest:guest@${amqpProxy.address}`,
    CALLBACK_RETRY_DELAYS_MS: DELAYS.join(','),
    CALLBACK_TIMEOUT_MS: '1000',
    RATE_LIMIT_PER_SECOND: '5000',
  });
  merchant = stack.createMerchant('Callbacks merchant');
  const call = api(stack, merchant.apiToken);
  await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/deposit` });
  await call('PUT', '/api/updateCallbackUrlWithdraw', { url: `${receiver.url}/withdraw` });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  await amqpProxy?.close();
});

let n = 0;
const orderId = () => `cb-${Date.now()}-${++n}`;
const forTx = (txId: string) => (r: ReceivedCallback) => r.json?.data?.id === txId;
const operator = (id: string, status: string) =>
  fetch(`${stack.transactions}/internal/transactions/${id}/status`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
const view = async (id: string) =>
  (await api(stack, merchant.apiToken)('GET', `/ui/viewTransaction?id=${id}`, undefined, { accept: 'application/json' })).json;

describe('delivery', () => {
  it('POSTs deposit.pending then deposit.completed, signed per Standard Webhooks, with a growing sequence', async () => {
    const traceId = '5e'.repeat(16);
    const tx = (
      await api(stack, merchant.apiToken)('POST', '/api/createDeposit', { amount: '10.50', currency: 'USD', orderId: orderId() }, {
        traceparent: `00-${traceId}-${'1f'.repeat(8)}-01`,
      })
    ).json;
    expect((await operator(tx.id, 'completed')).status).toBe(200);
    const got = await receiver.waitFor(2, forTx(tx.id));
    const wh = new Webhook(merchant.callbackSigningSecret);
    for (const r of got) {
      expect(r.path).toBe('/deposit');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe(r.json.id);
      expect(() => wh.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    }
    // Exactly what /openapi.json's webhook says is sent: its fields, no others, the transaction's alike.
    const published = (await api(stack, undefined)('GET', '/openapi.json')).json;
    const schema = published.components.schemas[published.webhooks.transactionEvent.post.requestBody.content['application/json'].schema.$ref.split('/').pop()];
    for (const r of got) {
      expect(Object.keys(r.json).sort()).toEqual(Object.keys(schema.properties).sort());
      for (const field of schema.required) expect(r.json).toHaveProperty(field);
      expect(Object.keys(r.json.data).every((k) => k in schema.properties.data.properties)).toBe(true);
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(r.headers[name]).toEqual(expect.any(String));
    }
    const [pending, completed] = got.sort((a, b) => a.json.sequence - b.json.sequence);
    expect(pending!.json).toMatchObject({ type: 'deposit.pending', sequence: 1, data: { id: tx.id, status: 'pending', amount: '10.50' } });
    expect(completed!.json).toMatchObject({ type: 'deposit.completed', sequence: 2, data: { id: tx.id, status: 'completed' } });
    expect(pending!.json.id).toMatch(/^evt_/);
    expect(pending!.json.id).not.toBe(completed!.json.id);
    expect(pending!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-`));
    const v = await eventually(() => view(tx.id), (d) => d.events.every((e: any) => e.delivery.status === 'succeeded'));
    expect(v.events.map((e: any) => [e.type, e.delivery.status, e.delivery.attempts.length])).toEqual([
      ['deposit.pending', 'succeeded', 1],
      ['deposit.completed', 'succeeded', 1],
    ]);
  });

  it('sends withdraw events to the withdraw URL', async () => {
    const tx = (
      await api(stack, merchant.apiToken)('POST', '/api/createWithdraw', { amount: '1', currency: 'USD', orderId: orderId(), destination: 'w' })
    ).json;
    const [r] = await receiver.waitFor(1, forTx(tx.id));
    expect(r!.path).toBe('/withdraw');
    expect(r!.json.type).toBe('withdraw.pending');
  });

  it('marks the delivery skipped when no URL is set', async () => {
    const other = stack.createMerchant('No URLs');
    const tx = (await api(stack, other.apiToken)('POST', '/api/createDeposit', { amount: '1', currency: 'USD', orderId: orderId() })).json;
    const call = api(stack, other.apiToken);
    const v = await eventually(
      async () => (await call('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' })).json,
      (d) => d.events[0].delivery.status === 'skipped',
    );
    expect(v.events[0].delivery).toEqual({ status: 'skipped', attempts: [] });
    expect(receiver.received.filter(forTx(tx.id))).toHaveLength(0);
  });
});

/**
 * The receiver answers by the orderId's prefix: `fail2-` fails an event's first two attempts with
 * 500, `always201-` answers 201 forever, `hang-` never answers, `reset-` drops the connection.
 */
function route(r: ReceivedCallback, attemptsSoFar: Map<string, number>) {
  const id = r.json?.id as string;
  const attempt = (attemptsSoFar.get(id) ?? 0) + 1;
  attemptsSoFar.set(id, attempt);
  const order = String(r.json?.data?.orderId ?? '');
  if (order.startsWith('fail2-')) return attempt <= 2 ? 500 : 200;
  if (order.startsWith('fail1-')) return attempt <= 1 ? 503 : 200;
  if (order.startsWith('always201-')) return 201;
  if (order.startsWith('hang-')) return 'hang' as const;
  if (order.startsWith('reset-')) return 'reset' as const;
  return 200;
}

const gaps = (rs: ReceivedCallback[]) => rs.slice(1).map((r, i) => r.at - rs[i]!.at);

describe('retries on RabbitMQ’s clock', () => {
  beforeAll(() => {
    const attempts = new Map<string, number>();
    receiver.respond = (r) => route(r, attempts);
  });
  afterAll(() => {
    receiver.respond = () => 200;
  });
  const create = async (prefix: string) =>
    (await api(stack, merchant.apiToken)('POST', '/api/createDeposit', { amount: '3', currency: 'USD', orderId: prefix + orderId() })).json;
  const pendingOf = (txId: string) => (r: ReceivedCallback) => forTx(txId)(r) && r.json.type === 'deposit.pending';

  it('fail twice then 200: three attempts, the waits as configured, delivery succeeded', async () => {
    const tx = await create('fail2-');
    const got = await receiver.waitFor(3, pendingOf(tx.id));
    const waits = gaps(got);
    expect(waits[0]).toBeGreaterThanOrEqual(DELAYS[0]! - 50);
    expect(waits[0]).toBeLessThan(DELAYS[0]! + 1000);
    expect(waits[1]).toBeGreaterThanOrEqual(DELAYS[1]! - 50);
    expect(waits[1]).toBeLessThan(DELAYS[1]! + 1000);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const v = await eventually(() => view(tx.id), (d) => d.events[0].delivery.status === 'succeeded');
    expect(v.events[0].delivery.status).toBe('succeeded');
    expect(v.events[0].delivery.attempts.map((a: any) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
  });

  it('sends each attempt to the URL as it is at that moment, and the viewer says where each went', async () => {
    const changer = stack.createMerchant('URL changer');
    const call = api(stack, changer.apiToken);
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/first` });
    const tx = (await call('POST', '/api/createDeposit', { amount: '3', currency: 'USD', orderId: 'fail1-' + orderId() })).json;
    await receiver.waitFor(1, pendingOf(tx.id));
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/second` });
    const got = await receiver.waitFor(2, pendingOf(tx.id));
    expect(got.map((r) => r.path)).toEqual(['/first', '/second']);
    const v = await eventually(
      async () => (await call('GET', `/ui/viewTransaction?id=${tx.id}`, undefined, { accept: 'application/json' })).json,
      (d) => d.events[0].delivery.status === 'succeeded',
    );
    expect(v.events[0].delivery.attempts.map((a: any) => [a.attempt, a.statusCode, a.url])).toEqual([
      [1, 503, `${receiver.url}/first`],
      [2, 200, `${receiver.url}/second`],
    ]);
  });

  it('201 every time: exactly 6 attempts, then failed', async () => {
    const tx = await create('always201-');
    const total = DELAYS.reduce((a, b) => a + b, 0);
    await receiver.waitFor(6, pendingOf(tx.id), total + 15_000);
    const v = await eventually(() => view(tx.id), (d) => d.events[0].delivery.status === 'failed', 10_000);
    expect(v.events[0].delivery.status).toBe('failed');
    expect(v.events[0].delivery.attempts.map((a: any) => a.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
    await new Promise((r) => setTimeout(r, DELAYS[4]! + 500));
    expect(receiver.received.filter(pendingOf(tx.id))).toHaveLength(6);
  }, 60_000);

  it('a receiver that hangs past CALLBACK_TIMEOUT_MS fails the attempt with no status and an error', async () => {
    const tx = await create('hang-');
    await receiver.waitFor(2, pendingOf(tx.id));
    const v = await eventually(() => view(tx.id), (d) => d.events[0].delivery.attempts.length >= 1);
    const [a] = v.events[0].delivery.attempts;
    expect(a.statusCode).toBeNull();
    expect(a.error).toEqual(expect.any(String));
    expect(a.error.length).toBeGreaterThan(0);
    expect(a.durationMs).toBeGreaterThanOrEqual(950);
    expect(a.durationMs).toBeLessThan(3000);
  });

  it('a reset connection fails the attempt with no status and an error', async () => {
    const tx = await create('reset-');
    await receiver.waitFor(2, pendingOf(tx.id));
    const v = await eventually(() => view(tx.id), (d) => d.events[0].delivery.attempts.length >= 1);
    expect(v.events[0].delivery.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/.+/) });
  });

  it('keeps every wait with 300 retries in flight across two delays (no head-of-line blocking)', async () => {
    const txs = await Promise.all(
      Array.from({ length: 300 }, (_, i) => create(i % 2 === 0 ? 'fail1-' : 'fail2-')),
    );
    const ids = new Set(txs.map((t) => t.id));
    const mine = (r: ReceivedCallback) => ids.has(r.json?.data?.id) && r.json.type === 'deposit.pending';
    // fail1: 2 attempts each; fail2: 3 attempts each.
    await receiver.waitFor(150 * 2 + 150 * 3, mine, 60_000);
    const byEvent = new Map<string, ReceivedCallback[]>();
    for (const r of receiver.received.filter(mine)) byEvent.set(r.json.id, [...(byEvent.get(r.json.id) ?? []), r]);
    const firstWaits = [...byEvent.values()].map((rs) => gaps(rs)[0]!);
    for (const w of firstWaits) {
      expect(w).toBeGreaterThanOrEqual(DELAYS[0]! - 50);
      expect(w).toBeLessThan(DELAYS[0]! + 1500);
    }
  }, 120_000);
});

describe('at least once', () => {
  it('delivers every event after callback-svc is killed -9 with hundreds in flight', async () => {
    const call = api(stack, merchant.apiToken);
    const txs = await Promise.all(Array.from({ length: 300 }, () => call('POST', '/api/createDeposit', { amount: '4', currency: 'USD', orderId: orderId() })));
    const ids = new Set(txs.map((t) => t.json.id));
    const mine = (r: ReceivedCallback) => ids.has(r.json?.data?.id);
    await receiver.waitFor(30, mine);
    await stack.stop('callback-svc', 'SIGKILL');
    await stack.start('callback-svc');
    // Repeats are allowed (at least once), so count distinct transactions, not requests.
    const distinct = () => new Set(receiver.received.filter(mine).map((r) => r.json.data.id));
    const delivered = await eventually(async () => distinct(), (d) => d.size === ids.size, 60_000);
    expect([...ids].filter((id) => !delivered.has(id))).toEqual([]);
  }, 120_000);

  it('loses nothing when RabbitMQ goes away while transactions are created', async () => {
    const call = api(stack, merchant.apiToken);
    amqpProxy.cut();
    try {
      const txs = await Promise.all(Array.from({ length: 30 }, () => call('POST', '/api/createDeposit', { amount: '5', currency: 'USD', orderId: orderId() })));
      expect(txs.every((t) => t.status === 201)).toBe(true);
      const ids = new Set(txs.map((t) => t.json.id));
      const mine = (r: ReceivedCallback) => ids.has(r.json?.data?.id);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.received.filter(mine)).toHaveLength(0);
      const ready = await fetch(`http://127.0.0.1:${stack.ports['callback-svc']}/readyz`);
      expect(ready.status).toBe(503);
      amqpProxy.restore();
      await receiver.waitFor(30, mine, 60_000);
      const delivered = new Set(receiver.received.filter(mine).map((r) => r.json.data.id));
      expect(delivered.size).toBe(30);
    } finally {
      amqpProxy.restore();
    }
  }, 120_000);
});

describe('the events database', () => {
  it('records every attempt in callback_attempts with its number, time and duration', async () => {
    const { rows } = await withDatabase(stack, (db) => db.query(`SELECT count(*)::int AS n, min(attempt) AS lo FROM callback_attempts`));
    expect(rows[0].n).toBeGreaterThan(0);
    expect(rows[0].lo).toBe(1);
  });
});
