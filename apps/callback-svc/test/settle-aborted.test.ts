/**
 * An aborted attempt is settled within a bound of the shutdown budget, or handed back (docs/api.md#processes-and-health:
 * SIGTERM exits 0 within SHUTDOWN_TIMEOUT_MS). The settling itself (record, retry) runs against the
 * real database and broker in process.test.ts; here, what happens when it does not finish in time.
 */
import { HandBackError, type MessagingLogger } from '@dw/messaging';
import { Pool } from 'pg';
import { abortedSendBounds, settleAborted, type AbortedSendDeps } from '../src/delivery';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { insertEvent, insertMerchant } from './support/fixtures';

const BOUNDS = { settleWithinMs: 300, releaseWithinMs: 300 };

let db: TestDatabase;
let pool: Pool;
const logged: string[] = [];
const logger: MessagingLogger = { info: (_o, m) => logged.push(m), warn: (_o, m) => logged.push(m), error: (_o, m) => logged.push(m) };

beforeAll(async () => {
  db = await createTestDatabase('settle_aborted');
  pool = new Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** An event whose attempt 1 is claimed for a minute, as the claim step leaves it while the send runs. */
async function claimedEvent() {
  const merchant = await insertMerchant(pool, { deposit: 'http://127.0.0.1:9/never' });
  const event = await insertEvent(pool, merchant.id, 'deposit');
  await pool.query(`UPDATE callback_deliveries SET claimed_attempt = 1, claimed_until = now() + interval '1 minute' WHERE event_id = $1`, [event.id]);
  return { eventId: event.id, body: Buffer.from(event.body), attempt: 1 };
}

async function claimHeld(eventId: string): Promise<boolean> {
  const { rows } = await pool.query(`SELECT claimed_until IS NOT NULL AS held FROM callback_deliveries WHERE event_id = $1`, [eventId]);
  return rows[0].held;
}

const deps = (): AbortedSendDeps => ({ pool, logger, abortedSend: BOUNDS });

describe('settleAborted', () => {
  it('resolves with the status once the attempt is recorded and retried in time, keeping the message', async () => {
    const msg = await claimedEvent();
    await expect(settleAborted(deps(), msg, async () => 'retrying')).resolves.toBe('retrying');
    expect(await claimHeld(msg.eventId)).toBe(true); // not released: the record step lets go of it
  });

  it('hands the message back and releases the claim once the bound has passed, and tells the settling to publish nothing', async () => {
    const msg = await claimedEvent();
    let deadline: AbortSignal | undefined;
    const started = Date.now();
    await expect(
      settleAborted(deps(), msg, (signal) => {
        deadline = signal;
        return new Promise(() => undefined); // PostgreSQL or the broker never answers
      }),
    ).rejects.toBeInstanceOf(HandBackError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(BOUNDS.settleWithinMs - 5);
    expect(Date.now() - started).toBeLessThan(BOUNDS.settleWithinMs + BOUNDS.releaseWithinMs + 200);
    expect(deadline?.aborted).toBe(true);
    expect(await claimHeld(msg.eventId)).toBe(false);
    expect(logged.at(-1)).toMatch(/message handed back: the attempt could not be recorded and retried \(not recorded and retried within 300 ms\)/);
  });

  it('hands the message back at once when the settling fails (the broker refused the retry)', async () => {
    const msg = await claimedEvent();
    const started = Date.now();
    await expect(settleAborted(deps(), msg, async () => Promise.reject(new Error('not connected to RabbitMQ')))).rejects.toBeInstanceOf(HandBackError);
    expect(Date.now() - started).toBeLessThan(BOUNDS.settleWithinMs);
    expect(await claimHeld(msg.eventId)).toBe(false);
    expect(logged.at(-1)).toMatch(/\(not connected to RabbitMQ\)/);
  });
});

describe('abortedSendBounds', () => {
  it('takes a fifth and a tenth of SHUTDOWN_TIMEOUT_MS, at most 2 s and 1 s, so the shutdown keeps a fifth of its budget', () => {
    expect(abortedSendBounds(10_000)).toEqual({ settleWithinMs: 2_000, releaseWithinMs: 1_000 });
    expect(abortedSendBounds(60_000)).toEqual({ settleWithinMs: 2_000, releaseWithinMs: 1_000 });
    expect(abortedSendBounds(3_000)).toEqual({ settleWithinMs: 600, releaseWithinMs: 300 });
  });
});
