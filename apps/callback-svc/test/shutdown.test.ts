/**
 * SIGTERM within its budget (docs/api.md#processes-and-health): CALLBACK_TIMEOUT_MS may exceed SHUTDOWN_TIMEOUT_MS, so a
 * process stopped while merchants' endpoints hang cuts those sends short, records each as a failed
 * attempt (their requests had reached the endpoint: docs/callbacks.md, every attempt is recorded) with its
 * retry scheduled and its claim let go, and exits 0 within the budget. Another instance then
 * delivers every one of those events as its retry, at once (not after the claim's lease).
 */
import { testPrefix } from '@dw/testing';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { buildService, freePort, startServiceProcess, type BuiltService, type ServiceProcess } from './support/built-process';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { deliveryOf, eventually, insertEvent, insertMerchant, type TestEvent } from './support/fixtures';
import { AMQP_URL, TestPublisher } from './support/service';

const SHUTDOWN_TIMEOUT_MS = 6_000;
/** Far longer than the shutdown budget: the sends in flight cannot simply be waited for. */
const CALLBACK_TIMEOUT_MS = 120_000;
const RETRY_DELAYS = [300];
const EVENTS = 3;

let db: TestDatabase;
let pool: Pool;
let publisher: TestPublisher;
let build: BuiltService;
let endpoint: http.Server;
/** Until set, the endpoint reads each request and never answers. */
let answering = false;
const received: string[] = [];
const processes: ServiceProcess[] = [];
const prefix = testPrefix('callback-svc.shutdown');

async function startInstance(): Promise<ServiceProcess> {
  const service = startServiceProcess(build, await freePort(), {
    AMQP_URL,
    AMQP_PREFIX: prefix,
    DATABASE_URL: db.url,
    CALLBACK_RETRY_DELAYS_MS: RETRY_DELAYS.join(','),
    CALLBACK_TIMEOUT_MS: String(CALLBACK_TIMEOUT_MS),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    CALLBACK_ALLOW_PRIVATE_HOSTS: 'true',
  });
  processes.push(service);
  await service.ready();
  return service;
}

beforeAll(async () => {
  build = buildService('shutdown');
  db = await createTestDatabase('shutdown');
  pool = new Pool({ connectionString: db.url });
  endpoint = http.createServer((req, res) => {
    req.resume();
    received.push(String(req.headers['webhook-id']));
    if (answering) res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  publisher = await TestPublisher.open(prefix);
}, 40_000);

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await publisher?.closeAndDeleteTopology(RETRY_DELAYS);
  endpoint?.closeAllConnections();
  await new Promise((resolve) => endpoint?.close(resolve));
  await pool?.end();
  await db?.drop();
  build?.remove();
});

describe('SIGTERM while merchants\' endpoints hang', () => {
  it('aborts the sends, records each as a failed attempt with its retry scheduled, exits 0 within SHUTDOWN_TIMEOUT_MS; another instance delivers every retry at once', async () => {
    const first = await startInstance();
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hang`;
    const events: TestEvent[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const merchant = await insertMerchant(pool, { deposit: url });
      events.push(await insertEvent(pool, merchant.id, 'deposit'));
    }
    for (const event of events) await publisher.publish(event);
    await eventually(async () => received.length === EVENTS, 15_000);

    const signalledAt = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const tookMs = Date.now() - signalledAt;
    expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(first.output()).toMatch(/aborted: callback-svc stopped before a reply/);

    // One failed attempt recorded each, nothing claimed, every retry back in the queue after its wait.
    for (const event of events) {
      const delivery = await deliveryOf(pool, event.id);
      expect(delivery).toMatchObject({ status: 'retrying', attemptCount: 1 });
      expect(delivery.attempts.map((a) => a.statusCode)).toEqual([null]);
      expect(delivery.attempts[0]!.error).toMatch(/^aborted: callback-svc stopped before a reply \(after \d+ ms\)$/);
    }
    const claims = await pool.query(`SELECT count(*)::int AS n FROM callback_deliveries WHERE claimed_until IS NOT NULL`);
    expect(claims.rows[0].n).toBe(0);
    await eventually(async () => (await publisher.readyInDeliveryQueue()) === EVENTS, 5_000);

    // A second instance takes the attempts over at once: the claims' lease (CALLBACK_TIMEOUT_MS + 5 s)
    // is two minutes, so delivery within seconds proves the claims were released.
    answering = true;
    const second = await startInstance();
    const restartedAt = Date.now();
    await eventually(async () => {
      const rows = await Promise.all(events.map((e) => deliveryOf(pool, e.id)));
      return rows.every((d) => d.status === 'succeeded');
    }, 15_000);
    expect(Date.now() - restartedAt).toBeLessThan(15_000);
    for (const event of events) {
      const delivery = await deliveryOf(pool, event.id);
      expect(delivery.attempts.map((a) => a.statusCode)).toEqual([null, 200]);
      expect(delivery.attemptCount).toBe(2);
    }
    // Every POST the endpoint received is a recorded attempt.
    expect(received.filter((id) => events.some((e) => e.id === id))).toHaveLength(EVENTS * 2);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
