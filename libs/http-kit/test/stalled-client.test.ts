/**
 * A client that stops reading is cut off (CLIENT_STALL_TIMEOUT_MS), and the stream its response was
 * reading from is destroyed with it; /metrics leaves the service's own port when METRICS_PORT is set.
 * A real listening server and a raw socket that never reads.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import pino from 'pino';
import { createService } from '../src';

describe('a client that stops reading a response', () => {
  it('is cut off once nothing has moved for the stall timeout, and the streamed source is destroyed', async () => {
    const app = createService({ logger: pino({ level: 'silent' }), readiness: {}, clientStallTimeoutMs: 1_000 });
    let sourceDestroyedAt = 0;
    let produced = 0;
    app.get('/endless', async (_request, reply) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const source = new Readable({
        read() {
          produced++;
          this.push(chunk);
        },
        destroy(err, done) {
          sourceDestroyedAt = Date.now();
          done(err);
        },
      });
      return reply.type('text/plain').send(source);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    try {
      socket.on('error', () => undefined);
      socket.write('GET /endless HTTP/1.1\r\nhost: x\r\n\r\n');
      await new Promise((resolve) => socket.once('data', resolve));
      socket.pause(); // never reads again
      const pausedAt = Date.now();
      const deadline = Date.now() + 15_000;
      while (!sourceDestroyedAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(sourceDestroyedAt).toBeGreaterThan(0);
      // Within the stall timeout of the moment the buffers were full (they fill in well under a second here).
      expect(sourceDestroyedAt - pausedAt).toBeLessThan(5_000);
      const producedWhenCut = produced;
      await new Promise((r) => setTimeout(r, 300));
      expect(produced).toBe(producedWhenCut);
    } finally {
      socket.destroy();
      await app.close();
    }
  }, 30_000);
});

describe('/metrics and METRICS_PORT', () => {
  it('serves /metrics on the main port when no METRICS_PORT is set, and not when one is; health stays', async () => {
    const plain = createService({ logger: pino({ level: 'silent' }), readiness: {} });
    const split = createService({ logger: pino({ level: 'silent' }), readiness: {}, metricsPort: 9464 });
    expect((await plain.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    expect((await split.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    expect((await split.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await split.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
