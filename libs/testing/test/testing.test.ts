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
