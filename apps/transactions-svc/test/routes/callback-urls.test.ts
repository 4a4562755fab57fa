import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let open: TestService;
beforeAll(async () => {
  svc = await startTestService('cburls');
  open = await startTestService('cburls-open', { allowPrivateHosts: true });
});
afterAll(async () => {
  await svc?.close();
  await open?.close();
});

const get = (s: TestService, m: string) => s.as(m, { method: 'GET', url: '/api/getCallbackUrls' });
const put = (s: TestService, m: string, kind: 'Deposit' | 'Withdraw', body: unknown) =>
  s.as(m, { method: 'PUT', url: `/api/updateCallbackUrl${kind}`, payload: body as object });

describe('GET /api/getCallbackUrls', () => {
  it('answers both URLs, null until set', async () => {
    const res = await get(svc, svc.merchantA);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ depositCallbackUrl: null, withdrawCallbackUrl: null });
  });
});

describe('PUT /api/updateCallbackUrlDeposit and …Withdraw', () => {
  it('sets each URL independently and answers the same shape as GET', async () => {
    const d = await put(svc, svc.merchantA, 'Deposit', { url: 'https://93.184.216.34/hooks/deposit' });
    expect(d.statusCode).toBe(200);
    expect(d.json()).toEqual({ depositCallbackUrl: 'https://93.184.216.34/hooks/deposit', withdrawCallbackUrl: null });
    const w = await put(svc, svc.merchantA, 'Withdraw', { url: 'http://93.184.216.34:8080/w?x=1' });
    expect(w.json()).toEqual({
      depositCallbackUrl: 'https://93.184.216.34/hooks/deposit',
      withdrawCallbackUrl: 'http://93.184.216.34:8080/w?x=1',
    });
    expect((await get(svc, svc.merchantA)).json()).toEqual(w.json());
    expect((await get(svc, svc.merchantB)).json()).toEqual({ depositCallbackUrl: null, withdrawCallbackUrl: null });
  });

  it('clears a URL with null', async () => {
    await put(svc, svc.merchantB, 'Deposit', { url: 'https://93.184.216.34/d' });
    const res = await put(svc, svc.merchantB, 'Deposit', { url: null });
    expect(res.json().depositCallbackUrl).toBeNull();
  });

  const refused: [string, unknown][] = [
    ['a relative URL', { url: '/hooks' }],
    ['ftp', { url: 'ftp://93.184.216.34/x' }],
    ['javascript:', { url: 'javascript:alert(1)' }],
    ['user:password', { url: 'https://user:pw@93.184.216.34/x' }],
    ['2049 characters', { url: 'https://93.184.216.34/' + 'a'.repeat(2049 - 'https://93.184.216.34/'.length) }],
    ['loopback', { url: 'http://127.0.0.1/x' }],
    ['localhost', { url: 'http://localhost:8080/x' }],
    ['RFC 1918', { url: 'http://10.1.2.3/x' }],
    ['172.16/12', { url: 'http://172.20.0.1/x' }],
    ['192.168/16', { url: 'http://192.168.1.1/x' }],
    ['CGNAT', { url: 'http://100.64.0.1/x' }],
    ['cloud metadata', { url: 'http://169.254.169.254/latest/meta-data' }],
    ['unspecified', { url: 'http://0.0.0.0/x' }],
    ['decimal loopback', { url: 'http://2130706433/x' }],
    ['hex loopback', { url: 'http://0x7f000001/x' }],
    ['octal loopback', { url: 'http://0177.0.0.1/x' }],
    ['short loopback', { url: 'http://127.1/x' }],
    ['IPv6 loopback', { url: 'http://[::1]/x' }],
    ['IPv6 ULA', { url: 'http://[fd00::1]/x' }],
    ['IPv4-mapped IPv6', { url: 'http://[::ffff:127.0.0.1]/x' }],
    ['IPv6 unspecified', { url: 'http://[::]/x' }],
    ['a number', { url: 42 }],
    ['missing url', {}],
    ['an unknown field', { url: null, extra: true }],
  ];

  it.each(refused)('refuses %s with 400 and keeps the old URL', async (_name, body) => {
    await put(svc, svc.merchantA, 'Deposit', { url: 'https://93.184.216.34/keep' });
    const res = await put(svc, svc.merchantA, 'Deposit', body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ path: expect.stringMatching(/^\/(url|extra)$/) })] });
    expect((await get(svc, svc.merchantA)).json().depositCallbackUrl).toBe('https://93.184.216.34/keep');
  });

  it.each([
    ['ftp://93.184.216.34/x', 'must use http or https'],
    ['http://10.1.2.3/x', 'host is not a public address'],
    ['https://user:pw@93.184.216.34/x', 'must not contain a user name or password'],
  ])('says what to fix in %s as every field error does', async (url, message) => {
    const res = await put(svc, svc.merchantA, 'Deposit', { url });
    expect(res.json()).toMatchObject({ detail: `Fix the body field url: ${message}.`, errors: [{ path: '/url', message }] });
  });

  it('accepts private hosts when CALLBACK_ALLOW_PRIVATE_HOSTS is true', async () => {
    for (const url of ['http://127.0.0.1:9999/cb', 'http://localhost/cb', 'http://10.0.0.1/cb']) {
      const res = await put(open, open.merchantA, 'Withdraw', { url });
      expect(res.statusCode).toBe(200);
      expect(res.json().withdrawCallbackUrl).toBe(url);
    }
  });
});
