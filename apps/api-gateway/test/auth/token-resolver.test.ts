import { hashToken, sameDigest, TokenResolver } from '../../src/auth/token-resolver';

describe('token resolver cache', () => {
  let now = 0;
  let lookups = 0;
  const owners = new Map<string, string>([[hashToken('tok-a'), 'merchant-a']]);
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
    expect(sameDigest(hashToken('a'), hashToken('a'))).toBe(true);
    expect(sameDigest(hashToken('a'), hashToken('b'))).toBe(false);
    expect(sameDigest(hashToken('a'), 'ab')).toBe(false);
  });
});
