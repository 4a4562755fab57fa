/**
 * A queued upstream request has a deadline (libs/http-kit upstream-deadline.ts, used by the
 * gateway's and the ui's pools): with every connection held (here by a request without a deadline,
 * as a download's slow body holds one), a request waiting in the pool's queue fails at its own
 * deadline instead of waiting for a connection to come free; an answer whose headers came in time is
 * never cut by it, however long its body takes. Real HTTP server, real undici pool.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamDeadlineError, withHeadersDeadline } from '@dw/http-kit';
import { Pool } from 'undici';

let server: http.Server;
let url: string;
const held: http.ServerResponse[] = [];
const arrived: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    arrived.push(req.url ?? '');
    if (req.url === '/hang') return void held.push(res); // never answers
    if (req.url === '/late') return void setTimeout(() => res.end('late'), 700); // frees its connection after the deadline
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first ');
    setTimeout(() => res.end('last'), 600); // a body slower than the deadline
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('withHeadersDeadline', () => {
  it('fails a request queued behind a held connection once the deadline passes', async () => {
    const raw = new Pool(url, { connections: 1, headersTimeout: 60_000 });
    // Made before the wrap, so without a deadline: it holds the one connection for good. (A holder
    // with the same deadline freed the connection at the same moment the queued request's deadline
    // came, and under load the queued one could get its headers first.)
    const holder = raw.request({ method: 'GET', path: '/hang' }).catch((err: Error) => err);
    const pool = withHeadersDeadline(raw, 300);
    const started = Date.now();
    const queued = await pool.request({ method: 'GET', path: '/slow-body' }).catch((err: Error) => err);
    expect(queued).toBeInstanceOf(UpstreamDeadlineError);
    expect(Date.now() - started).toBeLessThan(2_000);
    await pool.destroy();
    await holder;
  });

  it('leaves an answer whose headers came in time alone, its body slower than the deadline', async () => {
    const pool = withHeadersDeadline(new Pool(url, { connections: 1 }), 300);
    const res = await pool.request({ method: 'GET', path: '/slow-body' });
    expect(await res.body.text()).toBe('first last');
    await pool.close();
  });

  it('fails a queued request at its deadline in the callback form too', async () => {
    const raw = new Pool(url, { connections: 1, headersTimeout: 60_000 });
    const holder = raw.request({ method: 'GET', path: '/hang' }).catch((err: Error) => err);
    const pool = withHeadersDeadline(raw, 300);
    const started = Date.now();
    const err = await new Promise((resolve) => pool.request({ method: 'GET', path: '/slow-body' } as never, (e: unknown) => resolve(e)));
    expect(err).toBeInstanceOf(UpstreamDeadlineError);
    expect(Date.now() - started).toBeLessThan(2_000);
    await pool.destroy();
    await holder;
  });

  it.each([
    ['without a signal of the caller', undefined],
    ['beside a signal of the caller', new AbortController().signal],
  ])('never sends a request whose deadline passed while it was queued, once a connection comes free (%s)', async (_name, signal) => {
    const raw = new Pool(url, { connections: 1, headersTimeout: 60_000 });
    const holder = raw.request({ method: 'GET', path: '/late' });
    const pool = withHeadersDeadline(raw, 300);
    const path = `/never-sent-${signal ? 'beside' : 'alone'}`;
    const queued = await pool.request({ method: 'GET', path, ...(signal ? { signal } : {}) }).catch((err: Error) => err);
    expect(queued).toBeInstanceOf(UpstreamDeadlineError);
    // The holder's answer frees the one connection at 700 ms; the aborted request must not take it.
    expect(await (await holder).body.text()).toBe('late');
    const after = await pool.request({ method: 'GET', path: '/slow-body' });
    expect(await after.body.text()).toBe('first last');
    expect(arrived).not.toContain(path);
    await pool.close();
  });

  it('works in the callback form reply-from uses', async () => {
    const pool = withHeadersDeadline(new Pool(url, { connections: 1 }), 300);
    const err = await new Promise((resolve) => pool.request({ method: 'GET', path: '/hang' } as never, (e: unknown) => resolve(e)));
    expect(err).toBeInstanceOf(UpstreamDeadlineError);
    await pool.destroy();
  });
});
