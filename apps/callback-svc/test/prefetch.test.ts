import { eventually, insertEvent, insertMerchant, RECORDED_MS } from './support/fixtures';
import { useHarness } from './support/harness';

const PREFETCH = 3;
const TIMEOUT_MS = 3000;

const h = useHarness('prefetch', { CALLBACK_PREFETCH: String(PREFETCH), CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS) });

describe('CALLBACK_PREFETCH bounds the deliveries in flight', () => {
  it('sends exactly PREFETCH requests at once to a receiver that hangs, and the next ones only as those end', async () => {
    h.receiver.respond = () => 'hang';
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/hang` });
    const started = Date.now();
    const events: string[] = [];
    for (let i = 0; i < 10; i++) {
      const event = await insertEvent(h.service.pool, merchant.id, 'deposit');
      events.push(event.id);
      await h.publisher.publish(event);
    }

    await h.receiver.waitFor(PREFETCH);
    // Well inside the timeout nothing else arrives: PREFETCH requests are hanging, no more are sent.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 2));
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(h.receiver.received).toHaveLength(PREFETCH);
    // Once those time out, the next PREFETCH go out together.
    await h.receiver.waitFor(2 * PREFETCH, undefined, 3 * TIMEOUT_MS);
    // By the service's own clock (the receiver's would also hold its lag in reading the first ones),
    // no attempt after the first PREFETCH starts before one of those has timed out. An attempt is
    // recorded once it ends: the second round's, a timeout after they start.
    const earliest = async () =>
      (
        await h.service.pool.query<{ at: Date }>('SELECT at FROM callback_attempts WHERE event_id = ANY($1) ORDER BY at LIMIT $2', [
          events,
          PREFETCH + 1,
        ])
      ).rows;
    await eventually(async () => (await earliest()).length > PREFETCH, 2 * TIMEOUT_MS);
    const rows = await earliest();
    expect(rows[PREFETCH]!.at.getTime() - rows[0]!.at.getTime()).toBeGreaterThanOrEqual(TIMEOUT_MS - RECORDED_MS);
  });
});
