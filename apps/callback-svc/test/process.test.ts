/**
 * The real process, bundled as `npm run build` does and started with the OpenTelemetry preload as
 * `npm start` does: trace context on callbacks as production sends it, and SIGTERM (docs/api.md#processes-and-health).
 * (In-process tests cannot start OpenTelemetry: its undici hook is process-wide and would leak
 * into the other test files Jest runs in the same process.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CallbackReceiver, startCallbackReceiver, startTcpProxy, testPrefix } from '@dw/testing';
import { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { buildService, type BuiltService, freePort, type ServiceProcess, startServiceProcess } from './support/built-process';
import { deliveryOf, eventually, insertEvent, insertMerchant } from './support/fixtures';
import { AMQP_URL, TestPublisher } from './support/service';
import { ATTEMPT_HEADER, messagingNames } from '@dw/messaging';

const RETRY_DELAYS = [300];
const REPLY_AFTER_MS = 1500;

let db: TestDatabase;
let pool: Pool;
let publisher: TestPublisher;
let receiver: CallbackReceiver;
let built: BuiltService;
let svc: ServiceProcess;
const prefix = testPrefix('callback-svc.process');

/** Starts the built service on its own port with this file's database, broker prefix and retry waits, and waits for /readyz. */
async function startReadyProcess(env: Record<string, string> = {}): Promise<void> {
  svc = startServiceProcess(built, await freePort(), {
    AMQP_URL,
    AMQP_PREFIX: prefix,
    DATABASE_URL: db.url,
    CALLBACK_RETRY_DELAYS_MS: RETRY_DELAYS.join(','),
    CALLBACK_TIMEOUT_MS: '5000',
    CALLBACK_ALLOW_PRIVATE_HOSTS: 'true',
    ...env,
  });
  await svc.ready();
}

/** An endpoint that answers `status` REPLY_AFTER_MS after each request, so the delivery is in flight for that long. */
async function slowEndpoint(status: number) {
  let requestArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (requestArrived = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    requestArrived();
    setTimeout(() => res.writeHead(status).end('answer'), REPLY_AFTER_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    arrived,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

beforeAll(async () => {
  built = buildService('process');
  db = await createTestDatabase('process');
  pool = new Pool({ connectionString: db.url });
  receiver = await startCallbackReceiver();
  await startReadyProcess();
  publisher = await TestPublisher.open(prefix);
}, 40_000);

afterAll(async () => {
  if (svc && svc.child.exitCode === null) svc.child.kill('SIGKILL');
  await publisher?.closeAndDeleteTopology(RETRY_DELAYS);
  await receiver?.close();
  await pool?.end();
  await db?.drop();
  built?.remove();
});

describe('traceparent on callbacks (OpenTelemetry running)', () => {
  it('sends exactly one W3C traceparent per attempt, in the trace of the message, from a new span each time', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const merchant = await insertMerchant(pool, { deposit: `${receiver.url}/traced` });
    const event = await insertEvent(pool, merchant.id, 'deposit');
    receiver.respond = (_r, i) => (i === 0 ? 503 : 200);
    await publisher.publish(event, { traceparent: `00-${traceId}-${parentSpanId}-01` });

    const hits = await receiver.waitFor(2, (r) => r.path === '/traced');
    const spanIds = hits.map((h) => {
      // Two headers would arrive joined as "a, b"; one matches the bare format. No exporter here,
      // so the spans are not recorded: sampled flag 00.
      const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/.exec(String(h.headers.traceparent));
      expect(match?.[1]).toBe(traceId);
      return match![2];
    });
    expect(new Set([parentSpanId, ...spanIds]).size).toBe(3);
  });
});

describe('SIGTERM', () => {
  /** Publishes a deposit to `slow`'s endpoint and sends SIGTERM once its request has arrived there. */
  async function sigtermDuringSend(slow: Awaited<ReturnType<typeof slowEndpoint>>) {
    const merchant = await insertMerchant(pool, { deposit: slow.url });
    const event = await insertEvent(pool, merchant.id, 'deposit');
    await publisher.publish(event);
    await slow.arrived;
    const signalledAt = Date.now();
    svc.child.kill('SIGTERM');
    return { event, signalledAt };
  }

  it('finishes the delivery in flight, records and acks it, then exits 0', async () => {
    const slow = await slowEndpoint(200);
    try {
      const { event, signalledAt } = await sigtermDuringSend(slow);

      expect(await svc.exited).toBe(0);
      expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(REPLY_AFTER_MS - 200);
      const delivery = await deliveryOf(pool, event.id);
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((a) => a.statusCode)).toEqual([200]);
      // Acked before the connection closed: nothing went back to the queue.
      expect(await publisher.readyInDeliveryQueue()).toBe(0);
      expect(svc.output()).toMatch(/shutting down/);
    } finally {
      await slow.close();
    }
  });

  it('still schedules the retry of an attempt that fails while it drains, then acks: the next attempt comes on schedule', async () => {
    await startReadyProcess();
    const slow = await slowEndpoint(500);
    try {
      const { event } = await sigtermDuringSend(slow);

      expect(await svc.exited).toBe(0);
      const delivery = await deliveryOf(pool, event.id);
      expect(delivery.status).toBe('retrying');
      expect(delivery.attempts.map((a) => a.statusCode)).toEqual([500]);
      expect(svc.output()).not.toMatch(/cannot hand the message over/);
      // The retry waited RETRY_DELAYS[0] in its queue and is back for delivery as attempt 2 (not
      // the original message handed back as attempt 1).
      await eventually(async () => (await publisher.readyInDeliveryQueue()) === 1, 5000);
      const next = await publisher.takeFromDeliveryQueue();
      expect(next?.properties.headers?.[ATTEMPT_HEADER]).toBe(2);
    } finally {
      await slow.close();
    }
  });

  describe('a send cut short after its request went out (docs/callbacks.md: every attempt is recorded, 6 at most)', () => {
    /** Sends are cut after half the budget (1.5 s), long before the callback timeout: only the abort can end them. */
    const SHUTDOWN_TIMEOUT_MS = 3_000;
    const ABORTING = { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), CALLBACK_TIMEOUT_MS: '60000' };
    const ABORT_ERROR = /^aborted: callback-svc stopped before a reply \(after (\d+) ms\)$/;
    const postsOf = (eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId);

    /**
     * A deposit whose endpoint (on `path`) answers its n-th request (from 1) as `answer` says; SIGTERM
     * once `sigtermAt` requests arrived (and `beforeSigterm` has run).
     */
    async function sigtermDuringAttempt(path: string, answer: (n: number) => number | 'hang', sigtermAt: number, beforeSigterm = () => {}) {
      receiver.respond = (r) => (r.path === path ? answer(receiver.received.filter((x) => x.path === path).length) : 200);
      const merchant = await insertMerchant(pool, { deposit: `${receiver.url}${path}` });
      const event = await insertEvent(pool, merchant.id, 'deposit');
      await publisher.publish(event);
      await receiver.waitFor(sigtermAt, (r) => r.path === path);
      beforeSigterm();
      const signalledAt = Date.now();
      svc.child.kill('SIGTERM');
      expect(await svc.exited).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      return event;
    }

    it('records it as a failed attempt (no status, the abort as its error), acks it, and its retry comes back from its retry queue as attempt 2', async () => {
      await startReadyProcess(ABORTING);
      const event = await sigtermDuringAttempt('/never', () => 'hang', 1);

      const delivery = await deliveryOf(pool, event.id);
      expect(delivery).toMatchObject({ status: 'retrying', attemptCount: 1 });
      expect(delivery.attempts).toHaveLength(1);
      const [aborted] = delivery.attempts;
      expect(aborted).toMatchObject({ attempt: 1, statusCode: null });
      expect(aborted!.error).toMatch(ABORT_ERROR);
      expect(Number(ABORT_ERROR.exec(aborted!.error!)![1])).toBe(aborted!.durationMs);
      expect(aborted!.durationMs).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS / 2 - 100);
      // The merchant saw as many POSTs as the viewer shows attempts.
      expect(postsOf(event.id)).toHaveLength(delivery.attempts.length);
      // Acked, not handed back: what comes back to the delivery queue is the retry, as attempt 2,
      // dead-lettered by its retry queue once the schedule's wait ran out.
      await eventually(async () => (await publisher.readyInDeliveryQueue()) === 1, 5000);
      const next = await publisher.takeFromDeliveryQueue();
      expect(next?.properties.messageId).toBe(event.id);
      expect(next?.properties.headers?.[ATTEMPT_HEADER]).toBe(2);
      expect(next?.properties.headers?.['x-death']?.[0]).toMatchObject({ queue: messagingNames(prefix).retryQueue(RETRY_DELAYS[0]!), reason: 'expired' });
      expect(await publisher.readyInDeliveryQueue()).toBe(0);
    });

    it('fails the delivery when it was the last attempt of its series: nothing is sent again', async () => {
      await startReadyProcess(ABORTING);
      // RETRY_DELAYS allow 2 attempts: the first answers 500, the second (the last) hangs.
      const event = await sigtermDuringAttempt('/last', (n) => (n === 1 ? 500 : 'hang'), 2);

      const delivery = await deliveryOf(pool, event.id);
      expect(delivery).toMatchObject({ status: 'failed', attemptCount: 2 });
      expect(delivery.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 500], [2, null]]);
      expect(delivery.attempts[1]!.error).toMatch(ABORT_ERROR);
      expect(postsOf(event.id)).toHaveLength(delivery.attempts.length);
      // No retry and no message handed back, even after the retry wait.
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS[0]! * 3));
      expect(await publisher.readyInDeliveryQueue()).toBe(0);
      expect(await publisher.depth(messagingNames(prefix).retryQueue(RETRY_DELAYS[0]!))).toBe(0);
    });

    it('falls back to handing the message back unrecorded, its claim left to its lease, when PostgreSQL cannot be reached to record it', async () => {
      const pgProxy = await startTcpProxy('127.0.0.1', 5432);
      try {
        await startReadyProcess({ ...ABORTING, DATABASE_URL: db.url.replace('127.0.0.1:5432', pgProxy.address) });
        const event = await sigtermDuringAttempt('/no-database', () => 'hang', 1, () => pgProxy.cut());

        expect(svc.output()).toMatch(/message handed back: the attempt could not be recorded and retried/);
        expect(await deliveryOf(pool, event.id)).toMatchObject({ status: 'pending', attemptCount: 0, attempts: [] });
        const claim = await pool.query(`SELECT claimed_until > now() AS held FROM callback_deliveries WHERE event_id = $1`, [event.id]);
        expect(claim.rows[0].held).toBe(true);
        await eventually(async () => (await publisher.readyInDeliveryQueue()) === 1, 5000);
        const back = await publisher.takeFromDeliveryQueue();
        expect(back?.properties.messageId).toBe(event.id);
        expect(back?.properties.headers?.[ATTEMPT_HEADER] ?? 1).toBe(1);
      } finally {
        await pgProxy.close();
      }
    });

    it('falls back to handing the message back when the broker is gone before the retry is confirmed; the next process publishes the retry, and never repeats attempt 1', async () => {
      const amqpProxy = await startTcpProxy('127.0.0.1', 5672);
      try {
        await startReadyProcess({ ...ABORTING, AMQP_URL: AMQP_URL.replace('127.0.0.1:5672', amqpProxy.address) });
        // Attempt 1 hangs until SIGTERM cuts it; the broker connection is cut first. Attempt 2 answers 200.
        const event = await sigtermDuringAttempt('/no-broker', (n) => (n === 1 ? 'hang' : 200), 1, () => amqpProxy.cut());

        expect(svc.output()).toMatch(/message handed back: the attempt could not be recorded and retried/);
        const recorded = await deliveryOf(pool, event.id);
        expect(recorded).toMatchObject({ status: 'retrying', attemptCount: 1 });
        expect(recorded.attempts[0]!.error).toMatch(ABORT_ERROR);
        // The message is back (the broker requeued it when the connection went); the attempt it
        // carries is recorded, so the next process sends nothing for it and publishes its lost retry.
        await eventually(async () => (await publisher.readyInDeliveryQueue()) === 1, 5000);
        await startReadyProcess();
        await eventually(async () => (await deliveryOf(pool, event.id)).status === 'succeeded', 10_000);
        const delivery = await deliveryOf(pool, event.id);
        expect(delivery.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, null], [2, 200]]);
        expect(postsOf(event.id)).toHaveLength(delivery.attempts.length);
        svc.child.kill('SIGTERM');
        expect(await svc.exited).toBe(0);
      } finally {
        await amqpProxy.close();
      }
    });
  });
});
