/** POST /api/rotateCallbackSecret (docs/api.md#signing-secret): the merchant rolls its own signing secret. */
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('rotate_secret');
});
afterAll(async () => svc?.close());

const rotate = (payload: unknown, merchant = svc.merchantA) =>
  svc.as(merchant, { method: 'POST', url: '/api/rotateCallbackSecret', payload: payload as object });

async function secrets(merchantId: string) {
  const [row] = await svc.db.$queryRaw<{ current: string; previous: string | null; seconds_left: number | null }[]>`
    SELECT callback_signing_secret AS current, previous_signing_secret AS previous,
           extract(epoch FROM previous_signing_secret_expires_at - now())::float8 AS seconds_left
      FROM merchants WHERE id = ${merchantId}::uuid`;
  return row!;
}

describe('POST /api/rotateCallbackSecret', () => {
  it('answers 200 with the new secret, shown once, and keeps the old one for 86400 s by default', async () => {
    const before = await secrets(svc.merchantA);
    const res = await rotate({});
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body)).toEqual(['callbackSigningSecret']);
    expect(body.callbackSigningSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const after = await secrets(svc.merchantA);
    expect(after.current).toBe(body.callbackSigningSecret);
    expect(after.previous).toBe(before.current);
    expect(after.seconds_left).toBeGreaterThan(86_400 - 60);
    expect(after.seconds_left).toBeLessThanOrEqual(86_400);
  });

  it('keeps the old secret for overlapSeconds', async () => {
    const before = await secrets(svc.merchantA);
    expect((await rotate({ overlapSeconds: 600 })).statusCode).toBe(200);
    const after = await secrets(svc.merchantA);
    expect(after.previous).toBe(before.current);
    expect(after.seconds_left).toBeGreaterThan(540);
    expect(after.seconds_left).toBeLessThanOrEqual(600);
  });

  it('revokes the old secret at once with overlapSeconds 0', async () => {
    const res = await rotate({ overlapSeconds: 0 });
    expect(res.statusCode).toBe(200);
    expect(await secrets(svc.merchantA)).toEqual({ current: res.json().callbackSigningSecret, previous: null, seconds_left: null });
  });

  it('changes only the calling merchant', async () => {
    const other = await secrets(svc.merchantB);
    await rotate({});
    expect(await secrets(svc.merchantB)).toEqual(other);
  });

  it.each([[{ overlapSeconds: -1 }], [{ overlapSeconds: 604_801 }], [{ overlapSeconds: 1.5 }], [{ overlapSeconds: '60' }], [{ extra: true }]])(
    'answers 400 validation_failed for %j and changes nothing',
    async (payload) => {
      const before = await secrets(svc.merchantA);
      const res = await rotate(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: expect.any(Array) });
      const after = await secrets(svc.merchantA);
      expect([after.current, after.previous]).toEqual([before.current, before.previous]);
    },
  );

  it('answers 401 without a merchant', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/rotateCallbackSecret', payload: {} });
    expect(res.statusCode).toBe(401);
  });
});
