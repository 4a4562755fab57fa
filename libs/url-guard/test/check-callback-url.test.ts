import { checkCallbackUrl, MAX_CALLBACK_URL_LENGTH, NOT_PUBLIC_HOST } from '../src';
import { systemLookup } from '../src/callback-url-host';

/** A lookup that fails the test if it is ever called: literals and localhost need no DNS. */
function noDns(): { lookup: (host: string) => Promise<string[]>; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lookup: async (host) => {
      calls.push(host);
      throw new Error(`unexpected DNS lookup of ${host}`);
    },
  };
}

/** A lookup answering from a fixed table, standing in for a merchant's DNS zone. */
function zone(records: Record<string, string[]>): (host: string) => Promise<string[]> {
  return async (host) => {
    const addresses = records[host];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses;
  };
}

const production = { allowPrivateHosts: false };
const permissive = { allowPrivateHosts: true };

describe('a callback URL must be absolute http or https with a host', () => {
  it.each([
    ['ftp', 'ftp://93.184.216.34/x', 'url must use http or https'],
    ['javascript', 'javascript:alert(1)', 'url must use http or https'],
    ['file', 'file:///etc/passwd', 'url must use http or https'],
    ['relative path', '/callbacks/deposit', 'url must be absolute, starting with https:// or http://'],
    ['scheme-relative', '//example.com/cb', 'url must be absolute, starting with https:// or http://'],
    ['bare host', 'example.com/cb', 'url must be absolute, starting with https:// or http://'],
    ['empty', '', 'url must be absolute, starting with https:// or http://'],
    ['no host', 'http://', 'url must include a host'],
    ['no host, https', 'https:///cb', 'url must include a host'],
    ['no slashes', 'http:example.com/cb', 'url must start with https:// or http://'],
    ['backslashes', 'https:\\\\example.com/cb', 'url must start with https:// or http://'],
    ['a backslash before an @ (one host to WHATWG, another to RFC 3986)', 'http://example.com\\@evil.com/', 'url must not contain a backslash (percent-encode it as %5C)'],
    ['a backslash in the path', 'https://93.184.216.34/a\\b', 'url must not contain a backslash (percent-encode it as %5C)'],
    ['port 0', 'https://93.184.216.34:0/cb', 'url port must be from 1 to 65535'],
    ['invalid port', 'https://93.184.216.34:99999/', 'url is not a valid URL: check its host and port'],
    ['invalid host', 'https://exa<mple.com/', 'url is not a valid URL: check its host and port'],
    ['leading space', ' https://93.184.216.34/', 'url must not contain spaces or control characters (percent-encode them)'],
    ['embedded tab', 'https://93.184.\t216.34/', 'url must not contain spaces or control characters (percent-encode them)'],
    ['space in path', 'https://93.184.216.34/a b', 'url must not contain spaces or control characters (percent-encode them)'],
  ])('refuses %s: %j', async (_name, raw, reason) => {
    // Refused even when private hosts are allowed: these are not URLs a callback can go to.
    await expect(checkCallbackUrl(raw, permissive)).resolves.toEqual({ ok: false, reason });
  });

  it.each(['http://93.184.216.34/cb', 'https://93.184.216.34:8443/cb?x=1#f', 'HTTPS://93.184.216.34/'])(
    'accepts %j',
    async (raw) => {
      await expect(checkCallbackUrl(raw, production)).resolves.toEqual({ ok: true, url: raw });
    },
  );
});

describe(`a callback URL is at most ${MAX_CALLBACK_URL_LENGTH} characters`, () => {
  const base = 'https://93.184.216.34/';
  const ofLength = (n: number) => base + 'a'.repeat(n - base.length);

  it('is 2048', () => {
    expect(MAX_CALLBACK_URL_LENGTH).toBe(2048);
  });

  it('accepts exactly 2048 characters', async () => {
    const raw = ofLength(2048);
    await expect(checkCallbackUrl(raw, production)).resolves.toEqual({ ok: true, url: raw });
  });

  it('refuses 2049 characters', async () => {
    await expect(checkCallbackUrl(ofLength(2049), permissive)).resolves.toEqual({
      ok: false,
      reason: 'url must be at most 2048 characters',
    });
  });
});

describe('a callback URL has no user name or password', () => {
  it.each([
    'https://user:secret@93.184.216.34/cb',
    'https://user@93.184.216.34/cb',
    'https://:secret@93.184.216.34/cb',
    'https://@93.184.216.34/cb',
    'https://user:secret@localhost/cb',
  ])('refuses %j', async (raw) => {
    await expect(checkCallbackUrl(raw, permissive)).resolves.toEqual({
      ok: false,
      reason: 'url must not contain a user name or password',
    });
  });

  it('accepts an @ in the path or query', async () => {
    const raw = 'https://93.184.216.34/cb/@merchant?email=a@b.example';
    await expect(checkCallbackUrl(raw, production)).resolves.toEqual({ ok: true, url: raw });
  });
});

describe('a callback URL is returned exactly as given', () => {
  it.each(['HTTP://93.184.216.34:80/a/../b?q=%7e#frag', 'https://[2606:4700:0:0::1111]/'])('%j', async (raw) => {
    await expect(checkCallbackUrl(raw, production)).resolves.toEqual({ ok: true, url: raw });
  });
});

describe('an IP-literal host that is not public is refused, in any spelling, without DNS', () => {
  it.each([
    ['loopback', 'http://127.0.0.1/cb', '127.0.0.1'],
    ['loopback with port', 'http://127.0.0.1:3002/cb', '127.0.0.1'],
    ['private 10/8', 'https://10.0.0.5/cb', '10.0.0.5'],
    ['private 172.16/12', 'https://172.20.1.1/cb', '172.20.1.1'],
    ['private 192.168/16', 'https://192.168.0.10/cb', '192.168.0.10'],
    ['CGNAT', 'https://100.64.0.1/cb', '100.64.0.1'],
    ['link-local', 'http://169.254.10.10/', '169.254.10.10'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['unspecified', 'http://0.0.0.0/', '0.0.0.0'],
    ['unspecified, short', 'http://0/', '0.0.0.0'],
    ['decimal', 'http://2130706433/', '127.0.0.1'],
    ['hex', 'http://0x7f000001/', '127.0.0.1'],
    ['hex, dotted', 'http://0x7f.0.0.1/', '127.0.0.1'],
    ['octal', 'http://0177.0.0.1/', '127.0.0.1'],
    ['short form', 'http://127.1/', '127.0.0.1'],
    ['trailing dot', 'http://127.0.0.1./', '127.0.0.1'],
    ['decimal metadata', 'http://2852039166/', '169.254.169.254'],
    ['IPv6 loopback', 'http://[::1]/', '::1'],
    ['IPv6 unspecified', 'http://[::]/', '::'],
    ['IPv6 unique local', 'http://[fd00::5]/', 'fd00::5'],
    ['IPv6 link-local', 'http://[fe80::1]/', 'fe80::1'],
    ['IPv4-mapped, dotted', 'http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['IPv4-mapped, hex', 'http://[::ffff:7f00:1]/', '::ffff:7f00:1'],
    ['IPv4-mapped metadata', 'http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
    ['IPv4-compatible', 'http://[::127.0.0.1]/', '::7f00:1'],
    ['NAT64 of private', 'http://[64:ff9b::10.0.0.5]/', '64:ff9b::a00:5'],
    ['6to4 of loopback', 'http://[2002:7f00:1::1]/', '2002:7f00:1::1'],
    ['multicast', 'http://224.0.0.1/', '224.0.0.1'],
    ['broadcast', 'http://255.255.255.255/', '255.255.255.255'],
    ['benchmarking', 'http://198.18.0.1/', '198.18.0.1'],
    ['documentation', 'http://192.0.2.1/', '192.0.2.1'],
    ['reserved 240/4', 'http://240.0.0.1/', '240.0.0.1'],
  ])('%s: %s', async (_name, raw, address) => {
    const dns = noDns();
    await expect(checkCallbackUrl(raw, { ...production, lookup: dns.lookup })).resolves.toEqual({
      ok: false,
      reason: 'url host is not a public address',
    });
    await expect(checkCallbackUrl(raw, { ...permissive, lookup: dns.lookup })).resolves.toEqual({ ok: true, url: raw });
    expect(dns.calls).toEqual([]);
  });
});

describe('a public IP-literal host is accepted without DNS', () => {
  it.each([
    'http://93.184.216.34/x',
    'https://[2606:4700::1111]/',
    'https://1.1.1.1:8443/cb',
    'http://[::ffff:93.184.216.34]/',
    'http://1572395042/',
  ])('%s', async (raw) => {
    const dns = noDns();
    await expect(checkCallbackUrl(raw, { ...production, lookup: dns.lookup })).resolves.toEqual({ ok: true, url: raw });
    expect(dns.calls).toEqual([]);
  });
});

describe('localhost and *.localhost are refused without DNS', () => {
  it.each(['http://localhost/cb', 'http://LOCALHOST:3002/', 'http://localhost./', 'https://merchant.localhost/cb'])(
    '%s',
    async (raw) => {
      const dns = noDns();
      await expect(checkCallbackUrl(raw, { ...production, lookup: dns.lookup })).resolves.toEqual({
        ok: false,
        reason: 'url host must be a public host name, not localhost',
      });
      await expect(checkCallbackUrl(raw, { ...permissive, lookup: dns.lookup })).resolves.toEqual({ ok: true, url: raw });
      expect(dns.calls).toEqual([]);
    },
  );

  it('does not mistake a name that merely contains localhost', async () => {
    const lookup = zone({ 'localhost.merchant.example': ['93.184.216.34'] });
    const raw = 'https://localhost.merchant.example/cb';
    await expect(checkCallbackUrl(raw, { ...production, lookup })).resolves.toEqual({ ok: true, url: raw });
  });
});

describe('a host name is refused when any address it resolves to is not public', () => {
  const lookup = zone({
    'public.merchant.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'intranet.merchant.example': ['10.0.0.5'],
    'mixed.merchant.example': ['93.184.216.34', '192.168.1.20'],
    'mixed6.merchant.example': ['2606:4700::1111', 'fd00::7'],
    'rebind.merchant.example': ['127.0.0.1'],
    'metadata.merchant.example': ['169.254.169.254'],
    'mapped.merchant.example': ['::ffff:10.1.2.3'],
    'empty.merchant.example': [],
  });

  it.each([
    ['https://intranet.merchant.example/cb', '10.0.0.5'],
    ['https://mixed.merchant.example/cb', '192.168.1.20'],
    ['https://mixed6.merchant.example/cb', 'fd00::7'],
    ['https://rebind.merchant.example/cb', '127.0.0.1'],
    ['https://metadata.merchant.example/cb', '169.254.169.254'],
    ['https://mapped.merchant.example/cb', '::ffff:10.1.2.3'],
  ])('refuses %s (resolves to %s)', async (raw, address) => {
    await expect(checkCallbackUrl(raw, { ...production, lookup })).resolves.toEqual({
      ok: false,
      reason: NOT_PUBLIC_HOST,
    });
    // Never the address it resolved to: a merchant could map internal names with it.
    expect(JSON.stringify(await checkCallbackUrl(raw, { ...production, lookup }))).not.toContain(address);
  });

  it('accepts a host name whose addresses are all public', async () => {
    const raw = 'https://public.merchant.example/cb';
    await expect(checkCallbackUrl(raw, { ...production, lookup })).resolves.toEqual({ ok: true, url: raw });
  });

  it('asks DNS for the host as the URL parser normalised it', async () => {
    const asked: string[] = [];
    const recording = async (host: string) => (asked.push(host), ['93.184.216.34']);
    await checkCallbackUrl('https://Public.MERCHANT.example:8443/cb', { ...production, lookup: recording });
    expect(asked).toEqual(['public.merchant.example']);
  });

  it('does not resolve at all when private hosts are allowed', async () => {
    const dns = noDns();
    const raw = 'https://intranet.merchant.example/cb';
    await expect(checkCallbackUrl(raw, { ...permissive, lookup: dns.lookup })).resolves.toEqual({ ok: true, url: raw });
    expect(dns.calls).toEqual([]);
  });
});

describe('a host name that does not resolve is refused', () => {
  it.each([
    ['no such name', 'https://nxdomain.merchant.example/cb', 'nxdomain.merchant.example'],
    ['no addresses', 'https://empty.merchant.example/cb', 'empty.merchant.example'],
  ])('%s: %s', async (_name, raw, host) => {
    const lookup = zone({ 'empty.merchant.example': [] });
    await expect(checkCallbackUrl(raw, { ...production, lookup })).resolves.toEqual({
      ok: false,
      reason: NOT_PUBLIC_HOST, // the same as a private answer: which internal names exist stays unknown
    });
  });

  it('with the system resolver (RFC 6761 .invalid never resolves)', async () => {
    await expect(checkCallbackUrl('https://no-such-host.invalid/cb', production)).resolves.toEqual({
      ok: false,
      reason: NOT_PUBLIC_HOST,
    });
  });
});

describe('the default lookup is the system resolver', () => {
  it('returns every address of a name, as strings', async () => {
    const addresses = await systemLookup('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((address) => address === '127.0.0.1' || address === '::1')).toBe(true);
  });
});
