/**
 * Connections per client address and in all (connection-limit.ts), over real sockets: what a
 * client holding many idle connections gets, and what everyone else keeps.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { TokenResolver } from '../src/auth/token-resolver';
import { OVER_LIMIT_IDLE_MS } from '../src/connection-limit';
import { upstream } from '../src/upstreams';
import { buildTestGateway } from './support/gateway';

interface Raw {
  socket: net.Socket;
  /** Everything received until now. */
  received: () => string;
  closed: Promise<number>;
}

/** A connection from `from` (any 127.0.0.0/8 address: each is a client address of its own). */
async function connect(port: number, from = '127.0.0.1'): Promise<Raw> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (data += chunk));
  socket.on('error', () => undefined);
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, received: () => data, closed };
}

/** Sends GET /healthz on the connection and resolves with the answer's head and body once it has come. */
async function ask(raw: Raw): Promise<string> {
  const before = raw.received().length;
  raw.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
  for (let i = 0; i < 200; i++) {
    const answer = raw.received().slice(before);
    const head = answer.indexOf('\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(answer)?.[1];
    if (head >= 0 && length !== undefined && answer.length >= head + 4 + Number(length)) return answer;
    if (raw.socket.destroyed && answer === '') return '';
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no whole answer: ${JSON.stringify(raw.received().slice(before))}`);
}

const status = (answer: string) => Number(answer.slice(9, 12));
const TOKEN = `dwk_${randomBytes(32).toString('base64url')}`;

describe('connections a client may hold open', () => {
  let app: FastifyInstance;
  let port: number;
  const raws: Raw[] = [];

  async function start(deps: Parameters<typeof buildTestGateway>[0]) {
    app = await buildTestGateway(deps);
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  }
  const open = async (from?: string) => {
    const raw = await connect(port, from);
    raws.push(raw);
    return raw;
  };

  afterEach(async () => {
    for (const raw of raws.splice(0)) raw.socket.destroy();
    await app.close();
  });

  it('answers a connection beyond the address share 429 rate_limited with Connection: close; the others keep working', async () => {
    await start({ connections: { perAddress: 2, max: 100 } });
    const [first, second] = [await open(), await open()];
    const third = await open();

    const refused = await ask(third);
    expect(status(refused)).toBe(429);
    expect(refused).toMatch(/\r\nconnection: close\r\n/i);
    expect(refused).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(refused).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 429,
      code: 'rate_limited',
      detail: expect.stringContaining('More than 2 connections are open from this address'),
    });
    await third.closed;

    expect(status(await ask(first))).toBe(200);
    expect(status(await ask(second))).toBe(200);
    // The same connections serve request after request.
    expect(status(await ask(first))).toBe(200);
  });

  it('closes an idle connection beyond the share after OVER_LIMIT_IDLE_MS, and admits a new one once an earlier one closed', async () => {
    await start({ connections: { perAddress: 1, max: 100 } });
    const first = await open();
    const idle = await open();
    const heldFor = await idle.closed;
    expect(heldFor).toBeGreaterThanOrEqual(OVER_LIMIT_IDLE_MS - 50);
    expect(heldFor).toBeLessThan(OVER_LIMIT_IDLE_MS + 2_000);
    expect(idle.received()).toBe('');

    first.socket.destroy();
    await first.closed;
    await new Promise((r) => setTimeout(r, 50));
    expect(status(await ask(await open()))).toBe(200);
  });

  it('does not count per address behind a proxy (TRUST_PROXY_HOPS above 0): the peer is the proxy', async () => {
    await start({ connections: { perAddress: 1, max: 100 }, trustProxyHops: 1 });
    const all = [await open(), await open(), await open()];
    for (const raw of all) expect(status(await ask(raw))).toBe(200);
  });

  it('closes a connection beyond GATEWAY_MAX_CONNECTIONS at once, whatever its address, and with it the idle ones, so the next is served', async () => {
    await start({ connections: { perAddress: 100, max: 2 }, trustProxyHops: 1 });
    const [first, second] = [await open(), await open()];
    expect(status(await ask(first))).toBe(200); // kept alive, idle now
    await new Promise((r) => setTimeout(r, OVER_LIMIT_IDLE_MS + 100)); // second has sent nothing for longer
    const beyond = await open();
    expect(await beyond.closed).toBeLessThan(1_000);
    expect(beyond.received()).toBe('');
    // Idle connections, used (first) or never (second), hold the gateway full no longer.
    expect(await first.closed).toBeLessThan(5_000);
    expect(await second.closed).toBeLessThan(5_000);
    expect(status(await ask(await open()))).toBe(200);
  });

  it('never cuts a request in progress when it closes the idle connections', async () => {
    // An upstream that takes longer than the sweep's threshold to answer.
    const slow = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"depositCallbackUrl":null,"withdrawCallbackUrl":null}'), OVER_LIMIT_IDLE_MS + 600);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      await start({
        connections: { perAddress: 100, max: 2 },
        trustProxyHops: 1,
        resolver: new TokenResolver(async () => '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01', 30_000),
        transactions: upstream(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`, 5_000),
      });
      const busy = await open();
      busy.socket.write(`GET /api/getCallbackUrls HTTP/1.1\r\nHost: gateway\r\nserviceApiToken: ${TOKEN}\r\n\r\n`); // waits for its upstream
      const idle = await open();
      await new Promise((r) => setTimeout(r, OVER_LIMIT_IDLE_MS + 100));
      const beyond = await open();
      await beyond.closed;
      await idle.closed;
      for (let i = 0; i < 200 && !/\r\n\r\n/.test(busy.received()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(status(busy.received())).toBe(200);
    } finally {
      slow.close();
    }
  });

  it('closes, once the gateway is full, a connection still sending its head after OVER_LIMIT_IDLE_MS (a slow-header client)', async () => {
    await start({ connections: { perAddress: 100, max: 2 }, trustProxyHops: 1 });
    const [slowHead, other] = [await open(), await open()];
    const trickle = setInterval(() => slowHead.socket.write('X'), 100); // a byte of a head every 100 ms
    try {
      slowHead.socket.write('GET /healthz HTTP/1.1\r\nX-Slow: ');
      await new Promise((r) => setTimeout(r, OVER_LIMIT_IDLE_MS + 100));
      const beyond = await open();
      await beyond.closed;
      expect(await slowHead.closed).toBeLessThan(OVER_LIMIT_IDLE_MS + 2_000);
      await other.closed;
      expect(status(await ask(await open()))).toBe(200);
    } finally {
      clearInterval(trickle);
    }
  });

  it('closes a connection beyond the address share after OVER_LIMIT_IDLE_MS even while it trickles a head byte by byte', async () => {
    await start({ connections: { perAddress: 1, max: 100 } });
    await open();
    const trickler = await open();
    trickler.socket.write('GET /healthz HTTP/1.1\r\nX-Slow: ');
    const trickle = setInterval(() => trickler.socket.write('X'), 100);
    try {
      const heldFor = await trickler.closed;
      expect(heldFor).toBeGreaterThanOrEqual(OVER_LIMIT_IDLE_MS - 50);
      expect(heldFor).toBeLessThan(OVER_LIMIT_IDLE_MS + 1_000);
    } finally {
      clearInterval(trickle);
    }
  });

  it('admits, when full, a client with fewer connections in place of an idle one of the address holding the most; that address reconnecting is refused', async () => {
    await start({ connections: { perAddress: 100, max: 4 } });
    const flood = [await open('127.0.0.2'), await open('127.0.0.2'), await open('127.0.0.2')];
    const other = await open('127.0.0.3');
    expect(status(await ask(other))).toBe(200); // kept alive, idle now

    // Full. A new client gets in at once, however recently the flood's connections opened.
    const newcomer = await open('127.0.0.4');
    expect(status(await ask(newcomer))).toBe(200);
    // The place was the flood's oldest idle connection, not the other client's.
    expect(await flood[0]!.closed).toBeLessThan(5_000);
    expect([flood[1]!.socket.destroyed, flood[2]!.socket.destroyed, other.socket.destroyed]).toEqual([false, false, false]);

    // The flood (2 now) reconnecting finds no address holding more than it would: refused at once.
    const again = await open('127.0.0.2');
    expect(await again.closed).toBeLessThan(1_000);
    expect(again.received()).toBe('');
    expect(status(await ask(other))).toBe(200);
    expect(status(await ask(newcomer))).toBe(200);
  });

  it('never takes the place of a connection with a request in progress', async () => {
    const slow = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"depositCallbackUrl":null,"withdrawCallbackUrl":null}'), 800);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      await start({
        connections: { perAddress: 100, max: 2 },
        resolver: new TokenResolver(async () => '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01', 30_000),
        transactions: upstream(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`, 5_000),
      });
      const busy = [await open('127.0.0.2'), await open('127.0.0.2')];
      for (const raw of busy) raw.socket.write(`GET /api/getCallbackUrls HTTP/1.1\r\nHost: gateway\r\nserviceApiToken: ${TOKEN}\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 100)); // both heads have come: in progress
      const newcomer = await open('127.0.0.3');
      expect(await newcomer.closed).toBeLessThan(1_000);
      for (const raw of busy) {
        for (let i = 0; i < 200 && !/\r\n\r\n/.test(raw.received()); i++) await new Promise((r) => setTimeout(r, 10));
        expect(status(raw.received())).toBe(200);
      }
    } finally {
      slow.close();
    }
  });

  it('refuses, when full of addresses holding as few as it would, the newcomer, and sweeps their idle connections so the next is served', async () => {
    await start({ connections: { perAddress: 100, max: 2 } });
    const [a, b] = [await open('127.0.0.2'), await open('127.0.0.3')];
    await new Promise((r) => setTimeout(r, OVER_LIMIT_IDLE_MS + 100));
    const refused = await open('127.0.0.4');
    expect(await refused.closed).toBeLessThan(1_000);
    expect(await a.closed).toBeLessThan(5_000);
    expect(await b.closed).toBeLessThan(5_000);
    expect(status(await ask(await open('127.0.0.4')))).toBe(200);
  });
});
