/**
 * A built service started alone (as the image and the chart start it) on a port another process
 * holds: one line that names the address and why, exit 1; not a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from './support/stack';

async function holdPort(): Promise<{ port: number; release: () => void }> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return { port: (holder.address() as net.AddressInfo).port, release: () => holder.close() };
}

/** The viewer needs neither PostgreSQL nor RabbitMQ to start, so nothing but the port can stop it. */
function startUi(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--require', './dist/instrumentation.js', 'dist/main.js'], {
    cwd: path.join(ROOT, 'apps/ui'),
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', INTERNAL_AUTH_SECRETS: randomBytes(32).toString('base64url'), ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('a service whose port another process holds', () => {
  it('says in one line that it cannot listen there and why, and exits 1', async () => {
    const held = await holdPort();
    try {
      const res = startUi({ UI_PORT: String(held.port) });
      expect(res.status).toBe(1);
      expect(res.stderr.trim()).toBe(`cannot listen on 127.0.0.1:${held.port}: another process is listening there`);
    } finally {
      held.release();
    }
  });

  it('names METRICS_PORT when the port held is the metrics one', async () => {
    const held = await holdPort();
    try {
      const res = startUi({ UI_PORT: '0', METRICS_PORT: String(held.port) });
      expect(res.status).toBe(1);
      expect(res.stderr.trim()).toBe(`cannot listen on 127.0.0.1:${held.port} (METRICS_PORT): another process is listening there`);
    } finally {
      held.release();
    }
  });
});
