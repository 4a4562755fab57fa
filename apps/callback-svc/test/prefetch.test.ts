import { insertEvent, insertMerchant } from './support/fixtures';
import { useHarness } from './support/harness';

const PREFETCH = 3;
const TIMEOUT_MS = 3000;

const h = useHarness('prefetch', { CALLBACK_PREFETCH: String(PREFETCH), CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS) });

describe('CALLBACK_PREFETCH bounds the deliveries in flight', () => {
  it('sends exactly PREFETCH requests at once to a receiver that hangs, and the next ones only as those end', async () => {
    h.receiver.respond = () => 'hang';
    const merchant = await insertMerchant(h.service.pool, { deposit: `${h.receiver.url}/hang` });
    const started = Date.now();
    for (let i = 0; i < 10; i++) await h.publisher.publish(await insertEvent(h.service.pool, merchant.id, 'deposit'));

    await h.receiver.waitFor(PREFETCH);
    // Well inside the timeout nothing else arrives: PREFETCH requests are hanging, no more are sent.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 2));
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(h.receiver.received).toHaveLength(PREFETCH);
    // Once those time out, the next PREFETCH go out together.
    const next = await h.receiver.waitFor(2 * PREFETCH, undefined, 3 * TIMEOUT_MS);
    expect(next[PREFETCH]!.at - next[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  });
});
