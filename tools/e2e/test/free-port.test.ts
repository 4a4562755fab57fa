/**
 * The stacks' ports (support/stack.ts freePort): each jest worker takes them from a block of its
 * own below the kernel's ephemeral range, so no other worker and no kernel-chosen port (bind to 0,
 * an outgoing connection) can be given the same port between the check and the service's listen.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort, PORT_BLOCK } from './support/stack';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
const worker = Number(process.env.JEST_WORKER_ID ?? 0) % 14;

it("gives distinct free ports from this worker's block, below the ephemeral range", async () => {
  // This machine's kernel range starts above the blocks, so they are used (not the kernel's choice).
  expect(PORT_BLOCK).toEqual({ first: 20_000 + worker * 900, size: 900 });
  const ports: number[] = [];
  for (let i = 0; i < 20; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(20);
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(20_000 + worker * 900);
    expect(port).toBeLessThan(Math.min(20_000 + (worker + 1) * 900, ephemeralLow));
  }
});

it('skips a port something already listens on', async () => {
  const first = await freePort();
  // Hold the block's next ports, then ask again: the answer is none of them.
  const held = await Promise.all(
    Array.from({ length: 3 }, (_, i) =>
      new Promise<net.Server>((resolve, reject) => {
        const srv = net.createServer().once('error', reject);
        srv.listen(first + 1 + i, '127.0.0.1', () => resolve(srv));
      }),
    ),
  ).catch(() => []); // a port of the three taken already: nothing to hold, the check below still holds
  try {
    const next = await freePort();
    expect(held.map((s) => (s.address() as net.AddressInfo).port)).not.toContain(next);
    expect(next).not.toBe(first);
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
});
