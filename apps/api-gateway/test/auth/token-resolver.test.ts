import { apiTokenHash } from '@dw/contracts';
import { sameDigest, TokenResolver } from '../../src/auth/token-resolver';

const MAX_NEGATIVE_ENTRIES = 10_000;

describe('token resolver cache', () => {
  let now = 0;
  let lookups = 0;
  const owners = new Map<string, string>([[apiTokenHash('tok-a'), 'merchant-a']]);
  const lookup = async (hash: string) => {
    lookups++;
    return owners.get(hash);
  };
  beforeEach(() => {
    lookups = 0;
    now = 0;
  });

  it('resolves a token by its SHA-256 and caches it while the broadcast is live', async () => {
    const r = new TokenResolver(lookup, 30_000, () => true, () => now);
    expect(await r.resolve('tok-a')).toBe('merchant-a');
    now += 20_000;
    expect(await r.resolve('tok-a')).toBe('merchant-a');
    expect(lookups).toBe(1);
    now += 20_000;
    await r.resolve('tok-a');
    expect(lookups).toBe(2);
  });

  it('trusts an entry for at most one second while the broadcast is down', async () => {
    const r = new TokenResolver(lookup, 30_000, () => false, () => now);
    await r.resolve('tok-a');
    now += 999;
    await r.resolve('tok-a');
    expect(lookups).toBe(1);
    now += 2;
    await r.resolve('tok-a');
    expect(lookups).toBe(2);
  });

  it('forgets a merchant on a rotation broadcast', async () => {
    const r = new TokenResolver(lookup, 30_000, () => true, () => now);
    await r.resolve('tok-a');
    r.invalidateMerchant('merchant-a');
    await r.resolve('tok-a');
    expect(lookups).toBe(2);
  });

  it('coalesces concurrent look-ups of one token', async () => {
    const r = new TokenResolver(lookup, 30_000, () => true, () => now);
    await Promise.all(Array.from({ length: 10 }, () => r.resolve('tok-a')));
    expect(lookups).toBe(1);
  });

  it('answers undefined for an unknown token and does not cache it for long', async () => {
    const r = new TokenResolver(lookup, 30_000, () => true, () => now);
    expect(await r.resolve('nope')).toBeUndefined();
    now += 1001;
    await r.resolve('nope');
    expect(lookups).toBe(2);
  });

  it('compares digests in constant time and by value', () => {
    expect(sameDigest(apiTokenHash('a'), apiTokenHash('a'))).toBe(true);
    expect(sameDigest(apiTokenHash('a'), apiTokenHash('b'))).toBe(false);
    expect(sameDigest(apiTokenHash('a'), 'ab')).toBe(false);
  });

  it('keeps a valid token through a flood of 100,000 distinct unknown ones, with bounded memory', async () => {
    const r = new TokenResolver(lookup, 30_000, () => true, () => now, MAX_NEGATIVE_ENTRIES);
    await r.resolve('tok-a');
    for (let i = 0; i < 100_000; i++) await r.resolve(`junk-${i}`);
    expect(r.size.positive).toBe(1);
    expect(r.size.negative).toBeLessThanOrEqual(MAX_NEGATIVE_ENTRIES);
    lookups = 0;
    expect(await r.resolve('tok-a')).toBe('merchant-a');
    expect(lookups).toBe(0);
  });

  it('does not cache the answer of a lookup that was in flight when a rotation arrived', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slowLookup = async (hash: string) => {
      const n = ++calls;
      if (n === 1) await held; // the first lookup answers from before the rotation
      return n === 1 ? owners.get(hash) : undefined; // after it, the old token is gone
    };
    const r = new TokenResolver(slowLookup, 30_000, () => true, () => now);
    const first = r.resolve('tok-a');
    r.invalidateMerchant('merchant-a'); // the rotation broadcast
    const afterRotation = r.resolve('tok-a'); // must not join the stale lookup
    release();
    expect(await first).toBe('merchant-a');
    expect(await afterRotation).toBeUndefined();
    expect(await r.resolve('tok-a')).toBeUndefined(); // the stale answer was not cached
    expect(calls).toBe(2); // the second answer (negative) is cached
  });
});
