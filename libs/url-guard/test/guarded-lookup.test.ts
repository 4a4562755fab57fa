import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { assertPublicHost, ERR_PRIVATE_ADDRESS, guardedLookup, PrivateAddressError } from '../src';

type LookupResult = { err: NodeJS.ErrnoException | null; address?: unknown; family?: number };

function lookupPlain(allow: boolean, host: string): Promise<LookupResult> {
  return new Promise((resolve) => guardedLookup(allow)(host, (err, address, family) => resolve({ err, address, family })));
}

function lookupFamily(allow: boolean, host: string, family: number): Promise<LookupResult> {
  return new Promise((resolve) =>
    guardedLookup(allow)(host, family, (err, address, fam) => resolve({ err, address, family: fam })),
  );
}

function lookupAll(allow: boolean, host: string): Promise<LookupResult> {
  return new Promise((resolve) => guardedLookup(allow)(host, { all: true }, (err, address) => resolve({ err, address })));
}

describe('guardedLookup refuses host names that resolve to non-public addresses', () => {
  it.each([
    ['plain form', () => lookupPlain(false, 'localhost')],
    ['family form', () => lookupFamily(false, 'localhost', 4)],
    ['{ all: true } form', () => lookupAll(false, 'localhost')],
  ])('%s: localhost fails with ERR_PRIVATE_ADDRESS naming the host, never the address (the merchant reads it)', async (_name, run) => {
    const { err } = await run();
    expect(err).toBeInstanceOf(PrivateAddressError);
    expect(err?.code).toBe(ERR_PRIVATE_ADDRESS);
    expect(err?.message).toBe('refusing to connect to localhost: it is not a public address');
    expect((err as PrivateAddressError).address).toMatch(/^(127\.0\.0\.1|::1)$/); // for the operator's logs
  });

  it('passes the resolver error on for a name that does not resolve', async () => {
    const { err } = await lookupPlain(false, 'no-such-host.invalid');
    expect(err).not.toBeNull();
    expect(err?.code).not.toBe(ERR_PRIVATE_ADDRESS);
  });
});

describe('guardedLookup(true) resolves like dns.lookup', () => {
  it('plain form gives one address and its family', async () => {
    const { err, address, family } = await lookupPlain(true, 'localhost');
    expect(err).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(address);
    expect(family).toBe(address === '::1' ? 6 : 4);
  });

  it('family form honours the family', async () => {
    await expect(lookupFamily(true, 'localhost', 4)).resolves.toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });

  it('{ all: true } form gives every address', async () => {
    const { err, address } = await lookupAll(true, 'localhost');
    expect(err).toBeNull();
    expect(address).toEqual(expect.arrayContaining([{ address: '127.0.0.1', family: 4 }]));
  });
});

describe('assertPublicHost refuses IP-literal hosts that are not public', () => {
  it.each(['127.0.0.1', '10.0.0.5', '169.254.169.254', '0.0.0.0', '[::1]', '::1', '[::ffff:7f00:1]', 'fe80::1%eth0', '[fd00::1]'])(
    'throws for %s',
    (hostname) => {
      expect(() => assertPublicHost(hostname)).toThrow(
        expect.objectContaining({ code: ERR_PRIVATE_ADDRESS, message: expect.stringContaining(hostname.replace(/^\[|\]$/g, '')) }),
      );
    },
  );

  // Host names are left to guardedLookup, which sees the addresses actually connected to.
  it.each(['93.184.216.34', '[2606:4700::1111]', '2606:4700::1111', 'merchant.example', 'localhost'])(
    'passes %s',
    (hostname) => {
      expect(() => assertPublicHost(hostname)).not.toThrow();
    },
  );
});

describe('an undici Agent with guardedLookup as connect.lookup', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('delivered'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.close();
    await once(server, 'close');
  });

  async function send(allowPrivateHosts: boolean, url: string) {
    const agent = new Agent({ connect: { lookup: guardedLookup(allowPrivateHosts) } });
    try {
      const res = await request(url, { method: 'POST', body: '{}', dispatcher: agent });
      return { status: res.statusCode, body: await res.body.text() };
    } finally {
      await agent.close();
    }
  }

  it('refuses to connect to a host name resolving to loopback when private hosts are not allowed', async () => {
    await expect(send(false, `http://localhost:${port}/`)).rejects.toMatchObject({
      code: ERR_PRIVATE_ADDRESS,
      message: 'refusing to connect to localhost: it is not a public address',
    });
  });

  it('connects and gets the 200 when private hosts are allowed', async () => {
    await expect(send(true, `http://localhost:${port}/`)).resolves.toEqual({ status: 200, body: 'delivered' });
  });

  // net.connect skips lookup for IP literals: this is why the sender must call assertPublicHost.
  it('is not consulted for an IP-literal host, which assertPublicHost refuses instead', async () => {
    const url = new URL(`http://127.0.0.1:${port}/`);
    await expect(send(false, url.href)).resolves.toEqual({ status: 200, body: 'delivered' });
    expect(() => assertPublicHost(url.hostname)).toThrow(PrivateAddressError);
  });
});
