import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { Type } from '@sinclair/typebox';
import { createService, conflict } from '../src';
import { MAX_LISTED_ERRORS } from '../src/errors';
import { DUPLICATE_KEY_MESSAGE, duplicateKeyPaths, MAX_BODY_CONTAINERS, MAX_BODY_DEPTH, MAX_BODY_MEMBERS, scanBody } from '../src/json-body';

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
        { path: '/extra', message: 'is not an allowed field (allowed: n)' },
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
      expect(res.json()).toMatchObject({ code: 'validation_failed', detail: 'The body is not valid UTF-8.', errors: [{ path: '' }] });
    }
    const ok = await app().inject({ method: 'POST', url: '/things', payload: Buffer.from('{"n":"\u00e9\u20ac\ud83d\ude00"}'), headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.statusCode).toBe(200);
  });

  it('refuses an empty JSON body with 400', async () => {
    const res = await app().inject({ method: 'POST', url: '/things', payload: '', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
  });

  describe('a JSON body holding a reserved key (__proto__, constructor.prototype)', () => {
    it.each([
      ['__proto__ in an object', '{"n":"x","metadata":{"__proto__":"y"}}', ['/metadata/__proto__']],
      ['constructor.prototype', '{"n":"x","metadata":{"constructor":{"prototype":"y"}}}', ['/metadata/constructor/prototype']],
      ['__proto__ at the top', '{"__proto__":{"n":"x"}}', ['/__proto__']],
      ['__proto__ written with escapes', '{"n":"x","\\u005f_proto__":1}', ['/__proto__']],
      ['__proto__ inside an array, and a key needing JSON Pointer escapes', '{"a/b~":[{"__proto__":1}],"constructor":{"prototype":1}}', ['/a~1b~0/0/__proto__', '/constructor/prototype']],
    ])('is valid JSON refused as 400 validation_failed naming the key: %s', async (_name, payload, paths) => {
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json', 'x-request-id': 'proto-1' } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toMatchObject({ code: 'validation_failed', requestId: 'proto-1', detail: expect.stringContaining('reserved key') });
      const errors = res.json().errors as { path: string }[];
      expect(errors).toHaveLength(paths.length);
      expect(errors).toEqual(expect.arrayContaining(paths.map((path) => ({ path, message: 'is a reserved key' }))));
    });

    it('leaves a constructor key that holds no prototype to the schema', async () => {
      const res = await app().inject({ method: 'POST', url: '/things', payload: '{"n":"x","constructor":"y"}', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual([{ path: '/constructor', message: 'is not an allowed field (allowed: n)' }]);
    });
  });

  describe('a JSON body holding a key twice in one object', () => {
    it.each([
      ['the amount twice: JSON.parse would keep the last', '{"n":"1.00","n":"900.00"}', ['/n']],
      ['a key written once plainly and once with escapes', '{"n":"x","\\u006e":"y"}', ['/n']],
      ['twice in a nested object, and in an object inside an array', '{"n":"x","m":{"a":1,"b":2,"a":3},"l":[1,{"k/~":1,"k/~":2}]}', ['/m/a', '/l/1/k~1~0']],
      ['three times at the top', '{"n":"a","n":"b","n":"c"}', ['/n', '/n']],
    ])('is valid JSON refused as 400 validation_failed naming each repeat: %s', async (_name, payload, paths) => {
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json', 'x-request-id': 'dup-1' } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toMatchObject({ code: 'validation_failed', requestId: 'dup-1', detail: expect.stringContaining('a key twice') });
      expect(res.json().errors).toEqual(paths.map((path) => ({ path, message: 'is a duplicate key: each key may appear once in an object' })));
    });

    it('names at most MAX_LISTED_ERRORS repeats, and says how many there are', async () => {
      const payload = `{${Array.from({ length: 200 }, () => '"a":0').join(',')}}`;
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual(Array.from({ length: MAX_LISTED_ERRORS }, () => ({ path: '/a', message: DUPLICATE_KEY_MESSAGE })));
      expect(res.json().detail).toContain(`errors lists the first ${MAX_LISTED_ERRORS} of 199`);
    });

    it('lists at most MAX_LISTED_ERRORS of any rule broken many times (30 unknown fields), the detail counting them all', async () => {
      const payload = JSON.stringify(Object.fromEntries([['n', 'x'], ...Array.from({ length: 30 }, (_, i) => [`extra${i}`, i])]));
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toHaveLength(MAX_LISTED_ERRORS);
      expect(res.json().detail).toMatch(/^Fix 30 body fields\. .*; and 27 more \(errors lists the first 20\)\.$/);
    });

    it('refuses a body nested deeper than MAX_BODY_DEPTH before parsing it: 65 KB nested 5,400 deep with 5,400 repeats answers one error', async () => {
      const depth = 5_400;
      const payload = `${'{"a":'.repeat(depth)}{${Array.from({ length: depth }, () => '"b":0').join(',')}}${'}'.repeat(depth)}`;
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        detail: expect.stringMatching(/^The body nests objects and arrays deeper than 32 levels; /),
        errors: [{ path: '', message: `nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels` }],
      });
      expect(res.body.length).toBeLessThan(1_024);
      // The bound itself: MAX_BODY_DEPTH levels pass (the schema then judges them), one more does not.
      const nested = (levels: number) => `{"n":"x","m":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
      expect(scanBody(nested(MAX_BODY_DEPTH)).beyond).toBeUndefined();
      expect(scanBody(nested(MAX_BODY_DEPTH + 1)).beyond).toEqual({ bound: 'depth', path: '' });
    });

    it('refuses more than MAX_BODY_CONTAINERS objects and arrays in all, however shallow and narrow each is', async () => {
      // 256 arrays of 28 nested ones, each 4 wide: within depth and width, about 30,000 containers (an outside audit's body).
      const column = `${'['.repeat(28)}${']'.repeat(28)}`;
      const payload = `{"n":"x","m":{"d":[${Array.from({ length: 256 }, () => `[${[column, column, column, column].join(',')}]`).join(',')}]}}`;
      expect(payload.length).toBeLessThan(65_536);
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '', message: `holds more than ${MAX_BODY_CONTAINERS} objects and arrays in all` }] });
      const within = `[${Array.from({ length: MAX_BODY_CONTAINERS - 1 }, () => '{}').join(',')}]`;
      expect([scanBody(within).beyond, scanBody(`[{},${within}]`).beyond]).toEqual([undefined, { bound: 'containers', path: '' }]);
    });

    it.each([
      ['21,000 empty strings', `[${Array.from({ length: 21_000 }, () => '""').join(',')}]`, ''],
      ['6,000 keys in metadata', `{"n":"x","m":{${Array.from({ length: 6_000 }, (_, i) => `"k${i}":""`).join(',')}}}`, '/m'],
      ['10,700 repeats of one key', `{${Array.from({ length: 10_700 }, () => '"a":0').join(',')}}`, ''],
      ['31,000 numbers in an array inside an array', `{"n":"x","l":[1,[${Array.from({ length: 31_000 }, () => '0').join(',')}]]}`, '/l/1'],
    ])('refuses an object or array of more than MAX_BODY_MEMBERS keys or items before parsing it, naming it: %s', async (_name, payload, path) => {
      const res = await app().inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path, message: `holds more than ${MAX_BODY_MEMBERS} keys or items` }] });
    });

    it('takes MAX_BODY_MEMBERS keys or items in one object or array, and a string holding brackets, commas and quotes as text', () => {
      const keys = `{${Array.from({ length: MAX_BODY_MEMBERS }, (_, i) => `"k${i}":0`).join(',')}}`;
      const items = `[${Array.from({ length: MAX_BODY_MEMBERS }, () => '0').join(',')}]`;
      const text = `{"s":"${'[{,\\\"'.repeat(1_000)}"}`;
      expect([scanBody(keys).beyond, scanBody(items).beyond, scanBody(text).beyond]).toEqual([undefined, undefined, undefined]);
      expect(JSON.parse(text)).toHaveProperty('s');
      expect(scanBody(`{${Array.from({ length: MAX_BODY_MEMBERS + 1 }, (_, i) => `"k${i}":0`).join(',')}}`).beyond).toEqual({ bound: 'members', path: '' });
    });

    it('takes the same key in different objects, and key-like strings among values, as they are', async () => {
      const payload = '{"n":"n","m":{"n":"\\"n\\":"},"l":[{"n":1},{"n":2}]}';
      expect(duplicateKeyPaths(payload)).toEqual([]);
      const res = await app().inject({ method: 'POST', url: '/things', payload: '{"n":"a,\\"n\\":{[x"}', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(200);
    });
  });

  describe('charset and content coding', () => {
    const post = (headers: Record<string, string>, payload: string | Buffer = '{"n":"x"}') =>
      app().inject({ method: 'POST', url: '/things', payload, headers: { 'x-request-id': 'media-1', ...headers } });
    const expect415 = (res: Awaited<ReturnType<typeof post>>) => {
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toMatchObject({ status: 415, code: 'unsupported_media_type', requestId: 'media-1' });
    };

    it.each(['application/json; charset=iso-8859-1', 'application/json; charset=utf-16', 'application/json;charset="UTF-16LE"', 'application/json; CHARSET=latin1', 'application/json; charset=us-ascii', 'application/json; charset=bogus', 'application/json; charset=utf-8; charset=latin1'])(
      'answers 415 for %s',
      async (contentType) => {
        const res = await post({ 'content-type': contentType });
        expect415(res);
        expect(res.json().detail).toContain('UTF-8');
      },
    );

    it.each(['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'Application/JSON;Charset=Utf-8', 'application/json;;;', 'application/json; foo="a;charset=latin1"'])(
      'accepts %s',
      async (contentType) => {
        expect((await post({ 'content-type': contentType })).statusCode).toBe(200);
      },
    );

    // Whether the body really is compressed (gzip) or not (the rest), the coding alone decides.
    it.each(['gzip', 'gzip', 'br', 'deflate', 'GZIP', 'identity, gzip'].map((coding, i) => [coding, i === 0 ? gzipSync('{"n":"x"}') : '{"n":"x"}'] as const))(
      'answers 415 for Content-Encoding: %s (case %#; case 0 really gzipped)',
      async (coding, payload) => {
        const res = await post({ 'content-type': 'application/json', 'content-encoding': coding }, payload);
        expect415(res);
        expect(res.json().detail).toContain('Content-Encoding');
        expect(res.headers['accept-encoding']).toBe('identity');
      },
    );

    it('accepts Content-Encoding: identity', async () => {
      expect((await post({ 'content-type': 'application/json', 'content-encoding': 'Identity' })).statusCode).toBe(200);
    });
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

  /** Writes `head` on a real socket to `a`; resolves with everything the server sent before it closed (within 3 s). */
  async function exchange(head: string, a = app()): Promise<string> {
    await a.listen({ port: 0, host: '127.0.0.1' });
    try {
      const socket = net.connect((a.server.address() as AddressInfo).port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1').on('data', (c: string) => (answer += c));
      socket.on('error', () => undefined);
      socket.write(head);
      let timer: NodeJS.Timeout | undefined;
      const closed = await new Promise<boolean>((resolve) => {
        socket.on('close', () => resolve(true));
        timer = setTimeout(() => resolve(false), 3_000);
      });
      clearTimeout(timer);
      socket.destroy();
      expect({ closed, answer }).toMatchObject({ closed: true });
      return answer;
    } finally {
      await a.close();
    }
  }

  describe('the Host header', () => {
    const problemOf = (answer: string) => {
      const [headText, body] = answer.split('\r\n\r\n');
      return { statusLine: headText!.split('\r\n')[0], head: headText!, body: JSON.parse(body!) };
    };

    it.each([
      ['missing from an HTTP/1.1 request', 'GET /readyz HTTP/1.1\r\nx-request-id: host-1\r\nconnection: close\r\n\r\n', 'is required once in an HTTP/1.1 request'],
      ['sent twice', 'GET /readyz HTTP/1.1\r\nhost: a\r\nHost: b\r\nx-request-id: host-1\r\nconnection: close\r\n\r\n', 'must be sent once, not more'],
    ])('%s is a 400 problem+json with the request id (RFC 9112 §3.2)', async (_name, head, message) => {
      const { statusLine, head: headText, body } = problemOf(await exchange(head));
      expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(headText).toMatch(/\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/i);
      expect(headText).toMatch(/\r\nx-request-id: host-1\r\n/i);
      expect(body).toMatchObject({ status: 400, code: 'validation_failed', requestId: 'host-1', errors: [{ path: 'header:host', message }] });
    });

    it('may be left out of an HTTP/1.0 request', async () => {
      expect(await exchange('GET /readyz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    });
  });

  it('serves a request whose Expect it does not know as if it had none, not with a bare 417', async () => {
    const answer = await exchange('GET /readyz HTTP/1.1\r\nhost: x\r\nexpect: foo\r\nx-request-id: exp-1\r\nconnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/\r\nx-request-id: exp-1\r\n/i);
  });

  describe('a CONNECT request', () => {
    it.each([
      ['to a path', 'CONNECT /things HTTP/1.1\r\nhost: x\r\nx-request-id: conn-1\r\n\r\n', 'conn-1'],
      ['to an authority, with a body-like tail', 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\nGET / HTTP/1.1\r\n\r\n', undefined],
    ])('%s is answered 404 problem+json with the request id, then closed', async (_name, head, sentId) => {
      const answer = await exchange(head);
      const [headText, body] = answer.split('\r\n\r\n');
      expect(headText).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
      const headers = Object.fromEntries(headText!.split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      expect(headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(headers.connection).toBe('close');
      expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body!, 'latin1'));
      const requestId = headers['x-request-id'];
      expect(requestId).toEqual(sentId ?? expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(JSON.parse(body!)).toMatchObject({ status: 404, code: 'not_found', requestId, detail: expect.stringContaining('CONNECT') });
      expect(headers['cache-control']).toBe('no-store');
    });
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

    it('is answered 400 problem+json and closed within a second of the limit when its body trickles in', async () => {
      const { answer, closedAfterMs } = await trickle('POST /things HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"n":"', 'x');
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('The request took too long to arrive.');
      expect(answer).toContain('application/problem+json');
      expect(closedAfterMs).toBeGreaterThanOrEqual(LIMIT_MS - 100);
      expect(closedAfterMs).toBeLessThan(LIMIT_MS + 1_500);
    });

    it('echoes the x-request-id of a request whose body trickled in past the limit', async () => {
      const { answer } = await trickle('POST /things HTTP/1.1\r\nhost: x\r\nx-request-id: slow-1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"n":"', 'x');
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nx-request-id: slow-1\r\n/i);
    });

    it('gives a request answered before its body came (a 404, no route) no second answer when the body never comes', async () => {
      const { answer, closedAfterMs } = await trickle('POST /nowhere HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n', '');
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
      expect(closedAfterMs).toBeLessThan(LIMIT_MS + 1_500);
    });

    it('is answered 400 problem+json, not closed without a word, when its body stops arriving altogether', async () => {
      // Stalled for 1 s, well inside the 5 s request timeout; exchange() sees the socket closed within 3 s.
      const a = createService({ logger: pino({ level: 'silent' }), readiness: {}, requestTimeoutMs: 5_000, clientStallTimeoutMs: 1_000 });
      a.post('/things', async () => ({ ok: true }));
      const answer = await exchange('POST /things HTTP/1.1\r\nhost: x\r\nx-request-id: stopped-1\r\ncontent-type: application/json\r\ncontent-length: 60\r\n\r\n{"n":', a);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nx-request-id: stopped-1\r\n/i);
      expect(answer).toContain('The request took too long to arrive.');
    });

    it('is answered 400 and closed when its headers trickle in', async () => {
      const { answer, closedAfterMs } = await trickle('GET /healthz HTTP/1.1\r\nhost: x\r\n', 'x-a: b\r\n');
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(closedAfterMs).toBeLessThan(LIMIT_MS + 1_500);
    });
  });

  describe('a request the HTTP parser refuses', () => {
    it.each([
      ['sent before the fault', 'GET /healthz HTTP/1.1\r\nhost: x\r\nx-request-id: parse-1\r\nx-a: a\x01b\r\n\r\n', 'parse-1'],
      ['not sane', 'GET /healthz HTTP/1.1\r\nhost: x\r\nx-request-id: has space\r\nx-a: a\x01b\r\n\r\n', undefined],
      ['sent twice', 'GET /healthz HTTP/1.1\r\nx-request-id: a-1\r\nx-request-id: a-2\r\nx-a: a\x01b\r\n\r\n', undefined],
    ])('is answered 400 problem+json, no-store, echoing an x-request-id %s only when it is one sane id', async (_name, head, echoed) => {
      const answer = await exchange(head);
      const [headText, body] = answer.split('\r\n\r\n');
      expect(headText).toMatch(/^HTTP\/1\.1 400 /);
      expect(headText).toMatch(/\r\nCache-Control: no-store\r\n/);
      const requestId = /\r\nx-request-id: ([^\r]*)/i.exec(headText!)![1];
      expect(requestId).toEqual(echoed ?? expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(JSON.parse(body!)).toMatchObject({ status: 400, code: 'validation_failed', requestId });
    });
  });

  it('marks every problem Cache-Control: no-store (a 404 of no route, a 409)', async () => {
    for (const url of ['/nowhere', '/conflict']) {
      const res = await app().inject({ method: 'GET', url });
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  describe('while the service closes (SIGTERM)', () => {
    it('answers a request arriving on a connection still open with 503 problem+json and the request id, and lets the one in flight finish', async () => {
      const a = createService({ logger: pino({ level: 'silent' }), readiness: {} });
      let started!: () => void;
      const inFlight = new Promise<void>((resolve) => (started = resolve));
      let finish!: () => void;
      a.get('/slow', async () => {
        started();
        await new Promise<void>((resolve) => (finish = resolve));
        return { done: true };
      });
      a.get('/fast', async () => ({ fast: true }));
      await a.listen({ port: 0, host: '127.0.0.1' });
      const socket = net.connect((a.server.address() as AddressInfo).port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1').on('data', (c: string) => (answer += c));
      socket.on('error', () => undefined);
      const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write('GET /slow HTTP/1.1\r\nhost: x\r\n\r\n');
      await inFlight;
      const closed = a.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.write('GET /fast HTTP/1.1\r\nhost: x\r\nx-request-id: late-1\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      finish();
      await closed;
      await socketClosed;
      const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      expect(first).toContain('{"done":true}');
      expect(second).toMatch(/^HTTP\/1\.1 503 /);
      expect(second).toMatch(/\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/i);
      expect(second).toMatch(/\r\nx-request-id: late-1\r\n/i);
      expect(second).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 503, code: 'service_unavailable', requestId: 'late-1' });
    });
  });
});
