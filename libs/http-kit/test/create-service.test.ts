import net from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Type } from '@sinclair/typebox';
import { createService, conflict } from '../src';

function app(ready = async () => undefined) {
  const a = createService({ logger: pino({ level: 'silent' }), readiness: { dep: ready } });
  a.post('/things', { schema: { body: Type.Object({ n: Type.String() }, { additionalProperties: false }) } }, async () => ({ ok: true }));
  a.get('/conflict', async () => {
    throw conflict('already there');
  });
  a.get('/boom', async () => {
    throw new Error('secret internals at /srv/db');
  });
  return a;
}

describe('the shared service shell', () => {
  it('answers problem+json with the request id for validation errors, naming each field', async () => {
    const res = await app().inject({ method: 'POST', url: '/things', payload: { n: 1, extra: true }, headers: { 'x-request-id': 'abc-1' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers['x-request-id']).toBe('abc-1');
    const body = res.json();
    expect(body).toMatchObject({ status: 400, code: 'validation_failed', requestId: 'abc-1', title: 'Validation failed' });
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { path: '/n', message: 'must be a string' },
        { path: '/extra', message: 'is not an allowed field' },
      ]),
    );
  });

  it('replaces an unusable x-request-id with a generated one', async () => {
    const res = await app().inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'has space' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('maps domain errors to their status and code', async () => {
    const res = await app().inject({ method: 'GET', url: '/conflict' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', detail: 'already there' });
  });

  it('never leaks internals in a 500', async () => {
    const res = await app().inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('internal');
    expect(res.body).not.toContain('secret');
  });

  it('answers 404 problem+json for unknown routes and 415 for non-JSON bodies', async () => {
    expect((await app().inject({ method: 'GET', url: '/nope' })).json().code).toBe('not_found');
    const res = await app().inject({ method: 'POST', url: '/things', payload: 'n=1', headers: { 'content-type': 'text/plain' } });
    expect(res.statusCode).toBe(415);
  });

  it('refuses a JSON body that is not UTF-8 (a stray byte, an overlong form, an encoded surrogate, a cut sequence) with 400', async () => {
    const bad = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]];
    for (const bytes of bad) {
      const payload = Buffer.concat([Buffer.from('{"n":"a'), Buffer.from(bytes), Buffer.from('"}')]);
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', detail: 'The body is not valid UTF-8.', errors: [{ path: '/' }] });
    }
    const ok = await app().inject({ method: 'POST', url: '/things', payload: Buffer.from('{"n":"\u00e9\u20ac\ud83d\ude00"}'), headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.statusCode).toBe(200);
  });

  it('still refuses __proto__ and constructor.prototype in a JSON body, and an empty one', async () => {
    for (const payload of ['{"__proto__":{"n":"x"}}', '{"constructor":{"prototype":{"n":"x"}}}', '']) {
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });

  it('answers a path that is not valid percent-encoding with a 400 problem carrying the request id', async () => {
    for (const url of ['/things%ZZ', '/%E0%A4%A', '/things/%']) {
      const res = await app().inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toMatchObject({ code: 'validation_failed', detail: 'The request path is not valid percent-encoding.', requestId: res.headers['x-request-id'] });
    }
  });

  it('reports readiness from its checks', async () => {
    expect((await app().inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const down = await app(async () => Promise.reject(new Error('down'))).inject({ method: 'GET', url: '/readyz' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ code: 'service_unavailable', detail: 'Not ready: dep unreachable.' });
  });

  it('answers 503 within its own timeout (2 s) when a check never settles', async () => {
    const started = Date.now();
    const hung = await app(() => new Promise(() => undefined)).inject({ method: 'GET', url: '/readyz' });
    const tookMs = Date.now() - started;
    expect(hung.statusCode).toBe(503);
    expect(tookMs).toBeGreaterThanOrEqual(1_900);
    expect(tookMs).toBeLessThan(3_000);
  });

  describe('a request that takes too long to arrive', () => {
    const LIMIT_MS = 1_500;

    /** Sends `start`, then one more byte of `drip` every 200 ms; resolves with what came back and when the socket closed. */
    async function trickle(start: string, drip: string): Promise<{ answer: string; closedAfterMs: number }> {
      const a = createService({ logger: pino({ level: 'silent' }), readiness: {}, requestTimeoutMs: LIMIT_MS });
      a.post('/things', async () => ({ ok: true }));
      await a.listen({ port: 0, host: '127.0.0.1' });
      try {
        const socket = net.connect((a.server.address() as AddressInfo).port, '127.0.0.1');
        const started = Date.now();
        let answer = '';
        socket.setEncoding('latin1').on('data', (c: string) => (answer += c));
        socket.on('error', () => undefined);
        socket.write(start);
        const timer = setInterval(() => socket.writable && socket.write(drip), 200);
        const closedAfterMs = await new Promise<number>((resolve) => {
          socket.on('close', () => resolve(Date.now() - started));
          setTimeout(() => resolve(Infinity), LIMIT_MS + 5_000);
        });
        clearInterval(timer);
        socket.destroy();
        return { answer, closedAfterMs };
      } finally {
        await a.close();
      }
    }

    it('is answered 408 problem+json and closed within a second of the limit when its body trickles in', async () => {
      const { answer, closedAfterMs } = await trickle('POST /things HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"n":"', 'x');
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('application/problem+json');
      expect(closedAfterMs).toBeGreaterThanOrEqual(LIMIT_MS - 100);
      expect(closedAfterMs).toBeLessThan(LIMIT_MS + 1_500);
    });

    it('is answered 408 and closed when its headers trickle in', async () => {
      const { answer, closedAfterMs } = await trickle('GET /healthz HTTP/1.1\r\nhost: x\r\n', 'x-a: b\r\n');
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(closedAfterMs).toBeLessThan(LIMIT_MS + 1_500);
    });
  });
});
