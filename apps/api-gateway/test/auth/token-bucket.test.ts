import { TokenBuckets } from '../../src/auth/token-bucket';
import { BadTokenLimit } from '../../src/auth/bad-token-limit';

describe('per-token rate limit: a bucket of N refilled at N per second', () => {
  let now = 0;
  const buckets = () => new TokenBuckets(5, () => now);

  it('lets a burst of N through, then answers the whole seconds to wait', () => {
    const b = buckets();
    for (let i = 0; i < 5; i++) expect(b.take('m')).toBe(0);
    expect(b.take('m')).toBe(1);
  });

  it('refills continuously at N per second, never above N', () => {
    const b = buckets();
    for (let i = 0; i < 5; i++) b.take('m');
    now += 200; // one token back
    expect(b.take('m')).toBe(0);
    expect(b.take('m')).toBe(1);
    now += 60_000;
    for (let i = 0; i < 5; i++) expect(b.take('m')).toBe(0);
    expect(b.take('m')).toBe(1);
  });

  it('keeps one bucket per key', () => {
    const b = buckets();
    for (let i = 0; i < 5; i++) b.take('a');
    expect(b.take('a')).toBe(1);
    expect(b.take('b')).toBe(0);
  });

  it('rounds Retry-After up to whole seconds for slow rates', () => {
    const slow = new TokenBuckets(1, () => now);
    expect(slow.take('x')).toBe(0);
    expect(slow.take('x')).toBe(1);
  });
});

describe('bad tokens per client address', () => {
  it('lets N bad tokens a minute through as 401s, then blocks the address until a token refills', () => {
    let now = 0;
    const limit = new BadTokenLimit(3, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limit.blocked('10.0.0.1')).toBe(0);
      limit.record('10.0.0.1');
    }
    expect(limit.blocked('10.0.0.1')).toBe(20); // one token back every 20 s
    expect(limit.blocked('10.0.0.2')).toBe(0);
    now += 20_000;
    expect(limit.blocked('10.0.0.1')).toBe(0);
  });
});
