/** Only the gateway speaks for a merchant (docs/api.md#processes-and-health): the ui believes x-merchant-id only with its proof. */
import { randomUUID } from 'node:crypto';
import { InternalAuth } from '@dw/http-kit';
import { INTERNAL_SECRET, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const url = '/ui/viewTransaction?limit=5';

function proof(secret: string, merchantId = MERCHANT_ID, at = Date.now()) {
  return new InternalAuth([secret], () => at).headers({ method: 'GET', path: url, merchantId, requestId: randomUUID() });
}

describe('GET /ui/viewTransaction from a caller that is not the gateway', () => {
  it.each([
    ['no proof', () => ({ 'x-merchant-id': MERCHANT_ID })],
    ['a proof signed with another secret', () => proof('not-the-internal-secret-0123456789abcdef')],
    ['a stale proof', () => proof(INTERNAL_SECRET, MERCHANT_ID, Date.now() - 300_000)],
  ])('answers 401 problem+json to a forged x-merchant-id with %s, without asking transactions-svc', async (_name, headers) => {
    t.upstream.calls.length = 0;
    const res = await t.ui.unsignedInject({ method: 'GET', url, headers: headers() });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'unauthorized' });
    expect(t.upstream.calls).toHaveLength(0);
  });

  it('answers the request the gateway proved, and proves its own call to transactions-svc', async () => {
    t.upstream.calls.length = 0;
    const res = await t.ui.unsignedInject({ method: 'GET', url, headers: proof(INTERNAL_SECRET) });
    expect(res.statusCode).toBe(200);
    expect(t.upstream.calls).toHaveLength(1);
    expect(t.upstream.calls[0]!.headers['x-internal-auth']).toMatch(/^t=\d+,n=[\w-]{22},b=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
  });

  it('answers a proof once: the same headers again get 401, without asking transactions-svc', async () => {
    t.upstream.calls.length = 0;
    const captured = proof(INTERNAL_SECRET);
    expect((await t.ui.unsignedInject({ method: 'GET', url, headers: captured })).statusCode).toBe(200);
    const replayed = await t.ui.unsignedInject({ method: 'GET', url, headers: captured });
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json()).toMatchObject({ code: 'unauthorized' });
    expect(t.upstream.calls).toHaveLength(1);
  });
});
