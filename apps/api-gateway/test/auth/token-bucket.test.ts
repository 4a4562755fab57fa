import { TokenBuckets } from '../../src/auth/token-bucket';

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
