import net from 'node:net';
import { startCallbackReceiver, startTcpProxy } from '../src';

describe('startTcpProxy', () => {
  it('forwards bytes, drops connections on cut() and accepts them again after restore()', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const proxy = await startTcpProxy('127.0.0.1', (echo.address() as net.AddressInfo).port);
    const talk = () =>
      new Promise<string>((resolve, reject) => {
        const c = net.connect(proxy.port, '127.0.0.1', () => c.write('ping'));
        c.once('data', (d) => (c.destroy(), resolve(String(d))));
        c.once('close', () => reject(new Error('closed')));
        c.once('error', reject);
      });
    expect(await talk()).toBe('ping');
    proxy.cut();
    await expect(talk()).rejects.toThrow();
    proxy.restore();
    expect(await talk()).toBe('ping');
    await proxy.close();
    echo.close();
  });

  it('in a black hole keeps connections open but forwards nothing either way, and forwards new connections after restore()', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const proxy = await startTcpProxy('127.0.0.1', (echo.address() as net.AddressInfo).port);
    const open = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const c = net.connect(proxy.port, '127.0.0.1', () => resolve(c));
        c.once('error', reject);
      });
    /** What comes back within `ms`: the echo, 'silence', or 'closed'. */
    const exchange = (c: net.Socket, ms: number) =>
      new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('silence'), ms);
        c.once('data', (d) => (clearTimeout(timer), resolve(String(d))));
        c.once('close', () => (clearTimeout(timer), resolve('closed')));
        c.write('ping');
      });
    const before = await open();
    expect(await exchange(before, 1000)).toBe('ping');
    proxy.blackHole();
    expect(await exchange(before, 300)).toBe('silence');
    const during = await open(); // accepted…
    expect(await exchange(during, 300)).toBe('silence'); // …never answered
    expect(before.destroyed || during.destroyed).toBe(false);
    proxy.restore();
    const after = await open();
    expect(await exchange(after, 1000)).toBe('ping');
    for (const c of [before, during, after]) c.destroy();
    await proxy.close();
    echo.close();
  });
});

describe('startCallbackReceiver', () => {
  it('records requests and answers as told', async () => {
    const r = await startCallbackReceiver();
    r.respond = (_req, i) => (i === 0 ? 500 : 200);
    const first = await fetch(`${r.url}/cb`, { method: 'POST', body: '{"a":1}' });
    const second = await fetch(`${r.url}/cb`, { method: 'POST', body: 'x' });
    expect([first.status, second.status]).toEqual([500, 200]);
    const got = await r.waitFor(2);
    expect(got[0]!.json).toEqual({ a: 1 });
    expect(got[1]!.body).toBe('x');
    await r.close();
  });
});
