/** The gateway's retry rule (upstream-retry.ts): a connection error, once, soon; never an answer. */
import { RETRY_DELAY_MS, RETRY_WITHIN_MS, retryDelayFor } from '../src/upstream-retry';

const attempt = (over: Partial<Parameters<typeof retryDelayFor>[0]>) =>
  retryDelayFor({ method: 'GET', attempt: 0, err: { code: 'UND_ERR_SOCKET' }, answered: false, elapsedMs: 5, ...over });

describe('retryDelayFor', () => {
  it('retries a GET once after a lost connection, and any method after a refused one', () => {
    expect(attempt({})).toBe(RETRY_DELAY_MS);
    expect(attempt({ method: 'POST', err: { code: 'ECONNREFUSED' } })).toBe(RETRY_DELAY_MS);
  });

  it('never retries an answer (503 included), a second time, a late failure or an unsafe method whose request may have arrived', () => {
    expect(attempt({ answered: true, err: null })).toBeNull();
    expect(attempt({ attempt: 1 })).toBeNull();
    expect(attempt({ elapsedMs: RETRY_WITHIN_MS + 1 })).toBeNull();
    expect(attempt({ method: 'POST' })).toBeNull();
    expect(attempt({ err: { code: 'DW_UPSTREAM_DEADLINE' } })).toBeNull();
  });
});
