import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProgressSlots, releaseOnClose } from '../src';

describe('InProgressSlots: work in progress at once, per key and in all', () => {
  it('admits perKey per key and total in all, names which bound refused, and frees a slot once (a second release is ignored)', () => {
    const changes: number[] = [];
    const slots = new InProgressSlots({ perKey: 2, total: 3 }, (delta) => changes.push(delta));
    const a1 = slots.acquire('a');
    const a2 = slots.acquire('a');
    expect(slots.acquire('a')).toEqual({ refused: 'key' });
    const b1 = slots.acquire('b');
    expect(slots.acquire('c')).toEqual({ refused: 'total' });
    if (!('release' in a1) || !('release' in a2) || !('release' in b1)) throw new Error('expected slots');
    expect([slots.inProgress('a'), slots.inProgress('b'), slots.inProgress()]).toEqual([2, 1, 3]);
    a1.release();
    a1.release();
    expect([slots.inProgress('a'), slots.inProgress()]).toEqual([1, 2]);
    expect(slots.acquire('a')).toHaveProperty('release');
    expect(slots.acquire('c')).toEqual({ refused: 'total' });
    expect(changes).toEqual([1, 1, 1, -1, 1]);
  });

  it('releaseOnClose frees the slot when the response is over, also when the client cut it off', async () => {
    const slots = new InProgressSlots({ perKey: 1, total: 1 });
    let answer: (() => void) | undefined;
    const server = http.createServer((req, res) => {
      const slot = slots.acquire('k');
      if ('refused' in slot) return res.writeHead(429).end();
      releaseOnClose(slot, res);
      if (req.url === '/hold') answer = () => res.end('late');
      else res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/now`)).status).toBe(200);
      expect(slots.inProgress()).toBe(0);

      const cut = new AbortController();
      const held = fetch(`${base}/hold`, { signal: cut.signal }).catch(() => 'aborted');
      while (!answer) await new Promise((r) => setTimeout(r, 5));
      expect(slots.inProgress('k')).toBe(1);
      expect((await fetch(`${base}/now`)).status).toBe(429);
      cut.abort();
      expect(await held).toBe('aborted');
      for (let i = 0; i < 100 && slots.inProgress() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(slots.inProgress()).toBe(0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
