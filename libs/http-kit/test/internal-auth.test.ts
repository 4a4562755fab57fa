import { bodyDigest, canonicalPath, EMPTY_BODY_DIGEST, InternalAuth, INTERNAL_AUTH_WINDOW_SECONDS } from '../src/internal-auth';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const req = { method: 'GET', path: '/api/transactions?limit=5', merchantId: '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01', requestId: 'r-1' };

describe('the gateway proof (x-internal-auth)', () => {
  it('verifies a fresh signature of exactly the request signed', () => {
    const auth = new InternalAuth([A]);
    const header = auth.sign(req);
    expect(header).toMatch(/^t=\d+,n=[A-Za-z0-9_-]{22},b=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
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

  it('gives every proof a nonce of its own, across many refills of the nonce pool', () => {
    const auth = new InternalAuth([A]);
    const nonces = Array.from({ length: 2000 }, () => /,n=([A-Za-z0-9_-]{22}),/.exec(auth.sign(req))?.[1]);
    expect(nonces.every((n) => n !== undefined)).toBe(true);
    expect(new Set(nonces).size).toBe(2000);
  });

  it('signs with the first secret and accepts every configured one (rotation)', () => {
    const rotating = new InternalAuth([B, A]);
    expect(rotating.verify(new InternalAuth([A]).sign(req), req)).toBe(true);
    expect(new InternalAuth([A]).verify(rotating.sign(req), req)).toBe(false);
    expect(new InternalAuth([B]).verify(rotating.sign(req), req)).toBe(true);
  });

  // A rollout runs the previous step's pods beside the next step's (gateway, transactions-svc and
  // ui each roll at their own pace), so each step must accept what the one before it signs and be
  // accepted by it. The documented rotation (docs/operations.md, "Secret rotation").
  it('rotates in three rollouts, old,new then new,old then new, with no request refused during any of them', () => {
    const steps = [[A], [A, B], [B, A], [B]];
    for (let i = 1; i < steps.length; i++) {
      const [before, after] = [new InternalAuth(steps[i - 1]!), new InternalAuth(steps[i]!)];
      for (const [signer, receiver] of [[before, after], [after, before], [after, after]] as const) {
        expect(receiver.verify(signer.sign(req), req)).toBe(true);
      }
    }
  });

  it.each([undefined, '', 't=1', 'v1=00', `t=1,v1=${'0'.repeat(63)}`, ['t=1,v1=x'], `t=1,n=${'A'.repeat(22)},b=${'0'.repeat(64)},v2=${'0'.repeat(63)}`])('refuses a malformed header %p', (header) => {
    expect(new InternalAuth([A]).verify(header, req)).toBe(false);
  });

  it('signs the path as the proxy puts it on the wire', () => {
    expect(canonicalPath('/ui/viewTransaction?orderId=a b')).toBe('/ui/viewTransaction?orderId=a%20b');
    expect(canonicalPath('/api/./getCallbackUrls')).toBe('/api/getCallbackUrls');
    const auth = new InternalAuth([A]);
    const header = auth.sign({ ...req, path: '/api/transactions?orderId=é' });
    expect(auth.verify(header, { ...req, path: '/api/transactions?orderId=%C3%A9' })).toBe(true);
  });

  it('signs the exact body bytes: another body, or none, does not verify', () => {
    const auth = new InternalAuth([A]);
    const body = '{"url":"https://merchant.example/cb"}';
    const header = auth.sign({ ...req, method: 'PUT', body });
    expect(auth.verify(header, { ...req, method: 'PUT', body })).toBe(true);
    expect(auth.verify(header, { ...req, method: 'PUT', body: Buffer.from(body) })).toBe(true);
    for (const other of ['{"url":"https://attacker.example/cb"}', `${body} `, '{ "url":"https://merchant.example/cb"}', '', undefined]) {
      expect(auth.verify(header, { ...req, method: 'PUT', body: other })).toBe(false);
    }
  });

  it('gives the proof of a body-less request the fixed digest of the empty body', () => {
    const auth = new InternalAuth([A]);
    expect(EMPTY_BODY_DIGEST).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(auth.check(auth.sign(req), req)?.bodyDigest).toBe(EMPTY_BODY_DIGEST);
    expect(auth.verify(auth.sign(req), { ...req, body: '' })).toBe(true);
    expect(auth.verify(auth.sign(req), { ...req, body: '{}' })).toBe(false);
  });

  it('checks the header before the body arrives and names the digest the body must have', () => {
    const auth = new InternalAuth([A]);
    const body = '{"amount":"10"}';
    const proof = auth.check(auth.sign({ ...req, body }), req);
    expect(proof?.bodyDigest).toBe(bodyDigest(body));
    // The digest in the header is signed: a header whose b= was swapped for another body's fails.
    const header = auth.sign({ ...req, body });
    const swapped = header.replace(/b=[0-9a-f]{64}/, `b=${bodyDigest('{"amount":"99999"}')}`);
    expect(auth.check(swapped, req)).toBeUndefined();
  });

  it('never signs two requests alike, even the same request twice in one second', () => {
    const auth = new InternalAuth([A], () => 1_000_000_000_000);
    const first = auth.sign(req);
    const second = auth.sign(req);
    expect(second).not.toBe(first);
    expect(auth.verify(first, req)).toBe(true);
    expect(auth.verify(second, req)).toBe(true);
  });
});

describe('a proof is accepted once (replay guard)', () => {
  it('accepts a proof the first time and refuses it every time after while it could be fresh', () => {
    const auth = new InternalAuth([A]);
    const proof = auth.check(auth.sign(req), req)!;
    expect(auth.replays.firstSighting(proof)).toBe(true);
    expect(auth.replays.firstSighting(proof)).toBe(false);
    expect(auth.replays.firstSighting({ ...proof })).toBe(false);
    // Another proof of the very same request (its own nonce) is another request.
    expect(auth.replays.firstSighting(auth.check(auth.sign(req), req)!)).toBe(true);
  });

  it('forgets a proof once the freshness window has closed on it, so memory stays bounded', () => {
    let now = 1_000_000_000_000;
    const auth = new InternalAuth([A], () => now);
    for (let i = 0; i < 1000; i++) expect(auth.replays.firstSighting(auth.check(auth.sign(req), req)!)).toBe(true);
    expect(auth.replays.size).toBe(1000);
    const last = auth.check(auth.sign(req), req)!;
    expect(auth.replays.firstSighting(last)).toBe(true);
    now += INTERNAL_AUTH_WINDOW_SECONDS * 1000;
    expect(auth.replays.firstSighting(last)).toBe(false); // still fresh: still remembered
    now += 2000;
    expect(auth.replays.firstSighting(auth.check(auth.sign(req), req)!)).toBe(true);
    expect(auth.replays.size).toBe(1); // the 1,001 expired ones are gone
  });
});
