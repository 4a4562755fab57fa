/**
 * Resolving a callback host has its own bound and never freezes the process (issue 8 §4): names
 * go to c-ares, not to getaddrinfo on the four libuv threadpool threads. A nameserver that never
 * answers is a real UDP socket on this machine that reads queries and stays silent.
 */
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { checkCallbackUrl, createHostResolver, guardedLookup, HostsFile, NOT_PUBLIC_HOST, PrivateAddressError } from '../src';

let silent: Socket;
let silentServer: string;
let queriesSeen = 0;
beforeAll(async () => {
  silent = createSocket('udp4');
  silent.on('message', () => queriesSeen++);
  silent.bind(0, '127.0.0.1');
  await once(silent, 'listening');
  silentServer = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(() => silent.close());

const hostsDir = mkdtempSync(path.join(tmpdir(), 'url-guard-hosts-'));
function hostsFile(text: string): HostsFile {
  const file = path.join(hostsDir, `hosts-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, text);
  return new HostsFile(file);
}

describe('a nameserver that never answers', () => {
  const bound = { queryTimeoutMs: 100, tries: 1, deadlineMs: 400 };

  it('fails the lookup with ETIMEOUT within the configured deadline', async () => {
    const resolve = createHostResolver({ ...bound, servers: [silentServer], hostsFile: hostsFile('') });
    const started = Date.now();
    await expect(resolve('merchant.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    const took = Date.now() - started;
    expect(took).toBeLessThan(bound.deadlineMs + 300);
    expect(queriesSeen).toBeGreaterThan(0); // the query really went to the silent server
  });

  it('ends at the deadline even when c-ares itself would wait much longer', async () => {
    const resolve = createHostResolver({ queryTimeoutMs: 10_000, tries: 4, deadlineMs: 300, servers: [silentServer], hostsFile: hostsFile('') });
    const started = Date.now();
    await expect(resolve('slow.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeLessThan(800);
  });

  it('does not block other lookups, file reads or the threadpool while 16 lookups hang', async () => {
    const resolve = createHostResolver({ queryTimeoutMs: 2_000, tries: 1, deadlineMs: 2_500, servers: [silentServer], hostsFile: hostsFile('127.0.0.1 pinned.test\n') });
    const hanging = Array.from({ length: 16 }, (_, i) => resolve(`hang-${i}.example`).catch((e: NodeJS.ErrnoException) => e.code));
    const started = Date.now();
    // Each of these needs the libuv threadpool (4 threads) or the resolver: all answer at once.
    const [pinned, file] = await Promise.all([resolve('pinned.test'), readFile(__filename, 'utf8')]);
    const quick = Date.now() - started;
    expect(pinned).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(file.length).toBeGreaterThan(0);
    expect(quick).toBeLessThan(500);
    expect(await Promise.all(hanging)).toEqual(Array(16).fill('ETIMEOUT'));
  });

  it('makes checkCallbackUrl refuse the URL with a clear reason instead of hanging', async () => {
    const resolve = createHostResolver({ ...bound, servers: [silentServer], hostsFile: hostsFile('') });
    const lookup = async (host: string) => (await resolve(host)).map((a) => a.address);
    const started = Date.now();
    const result = await checkCallbackUrl('https://merchant.example/cb', { allowPrivateHosts: false, lookup });
    expect(result).toEqual({ ok: false, reason: NOT_PUBLIC_HOST });
    expect(Date.now() - started).toBeLessThan(bound.deadlineMs + 300);
  });

  it('makes guardedLookup (the callback sender’s connect lookup) fail within the deadline, private hosts allowed or not', async () => {
    const resolve = createHostResolver({ ...bound, servers: [silentServer], hostsFile: hostsFile('') });
    for (const allow of [false, true]) {
      const started = Date.now();
      const err = await new Promise<NodeJS.ErrnoException | null>((done) => guardedLookup(allow, resolve)('merchant.example', { all: true }, (e) => done(e)));
      expect(err?.code).toBe('ETIMEOUT');
      expect(Date.now() - started).toBeLessThan(bound.deadlineMs + 300);
    }
  });
});

describe('names in the hosts file', () => {
  it('resolve from the file without asking a nameserver (localhost keeps working)', async () => {
    const before = queriesSeen;
    const resolve = createHostResolver({ servers: [silentServer], hostsFile: hostsFile('# comment\n127.0.0.1 localhost LOCAL.test # trailing\n::1 localhost\n10.1.2.3 internal.test\n') });
    expect(await resolve('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(await resolve('local.TEST.')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await resolve('localhost', 6)).toEqual([{ address: '::1', family: 6 }]);
    expect(queriesSeen).toBe(before);
  });

  it('are still judged by the private-address guard', async () => {
    const resolve = createHostResolver({ servers: [silentServer], hostsFile: hostsFile('10.1.2.3 internal.test\n') });
    const err = await new Promise<NodeJS.ErrnoException | null>((done) => guardedLookup(false, resolve)('internal.test', (e) => done(e)));
    expect(err).toBeInstanceOf(PrivateAddressError);
    expect(err?.message).toBe('refusing to connect to internal.test: it is not a public address');
    expect((err as PrivateAddressError).address).toBe('10.1.2.3');
    const allowed = await new Promise<unknown>((done) => guardedLookup(true, resolve)('internal.test', (_e, address) => done(address)));
    expect(allowed).toBe('10.1.2.3');
  });

  it('the system hosts file gives localhost with the default resolver', async () => {
    const addresses = await createHostResolver()('localhost');
    expect(addresses.map((a) => a.address)).toContain('127.0.0.1');
  });
});

describe('IP literals', () => {
  it('need no resolution at all', async () => {
    const resolve = createHostResolver({ servers: [silentServer], hostsFile: hostsFile('') });
    expect(await resolve('203.0.113.7')).toEqual([{ address: '203.0.113.7', family: 4 }]);
    expect(await resolve('[2001:db8::1]')).toEqual([{ address: '2001:db8::1', family: 6 }]);
  });
});
