import { canonicalPath, InternalAuth, INTERNAL_AUTH_WINDOW_SECONDS } from '../src/internal-auth';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const req = { method: 'GET', path: '/api/transactions?limit=5', merchantId: '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01', requestId: 'r-1' };

describe('the gateway proof (x-internal-auth)', () => {
  it('verifies a fresh signature of exactly the request signed', () => {
    const auth = new InternalAuth([A]);
    const header = auth.sign(req);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(auth.verify(header, req)).toBe(true);
    for (const other of [
      { ...req, method: 'POST' },
      { ...req, path: '/api/transactions?limit=6' },
      { ...req, merchantId: '7d1e0f6a-2b3c-4d5e-8f90-a1b2c3d4e5f6' },
      { ...req, requestId: 'r-2' },
    ]) {
      expect(auth.verify(header, other)).toBe(false);
    }
  });

  it(`refuses a signature more than ${INTERNAL_AUTH_WINDOW_SECONDS} s away from the clock, either way`, () => {
    let now = 1_000_000_000_000;
    const auth = new InternalAuth([A], () => now);
    const header = auth.sign(req);
    now += INTERNAL_AUTH_WINDOW_SECONDS * 1000;
    expect(auth.verify(header, req)).toBe(true);
    now += 1000;
    expect(auth.verify(header, req)).toBe(false);
    now -= 2 * (INTERNAL_AUTH_WINDOW_SECONDS + 1) * 1000;
    expect(auth.verify(header, req)).toBe(false);
  });

  it('signs with the first secret and accepts every configured one (rotation)', () => {
    const rotating = new InternalAuth([B, A]);
    expect(rotating.verify(new InternalAuth([A]).sign(req), req)).toBe(true);
    expect(new InternalAuth([A]).verify(rotating.sign(req), req)).toBe(false);
    expect(new InternalAuth([B]).verify(rotating.sign(req), req)).toBe(true);
  });

  it.each([undefined, '', 't=1', 'v1=00', `t=1,v1=${'0'.repeat(63)}`, ['t=1,v1=x']])('refuses a malformed header %p', (header) => {
    expect(new InternalAuth([A]).verify(header, req)).toBe(false);
  });

  it('signs the path as the proxy puts it on the wire', () => {
    expect(canonicalPath('/ui/viewTransaction?orderId=a b')).toBe('/ui/viewTransaction?orderId=a%20b');
    expect(canonicalPath('/api/./getCallbackUrls')).toBe('/api/getCallbackUrls');
    const auth = new InternalAuth([A]);
    const header = auth.sign({ ...req, path: '/api/transactions?orderId=é' });
    expect(auth.verify(header, { ...req, path: '/api/transactions?orderId=%C3%A9' })).toBe(true);
  });
});
