/**
 * `npm start` as the README gives it (scripts/start.mjs): on ports of its own, with only the
 * contract's port variables set, it builds, migrates, starts the four services, prints a demo
 * token that works through the gateway (the API and the viewer), delivers the demo merchant's
 * callbacks to its receiver, and stops everything with exit 0 on Ctrl-C. With PostgreSQL or
 * RabbitMQ unreachable (or RabbitMQ's address answering as something else), or a port held by another
 * process, it says which, at which address, and exits non-zero.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { DEFAULT_AMQP_URL, loadCallbackConfig } from '@dw/config';
import { testPrefix } from '@dw/testing';
import { request } from 'undici';
import { ROOT, deleteBrokerObjects, dropDatabase, freePort, freePortAmong } from './support/stack';

const START = path.join(ROOT, 'scripts/start.mjs');
const id = randomBytes(4).toString('hex');
const database = `dw_e2e_start_${id}`;
const prefix = testPrefix('e2e.start', id);
/** Ports on the WHATWG fetch standard's bad-port list (IRC's and X11's among them), which fetch() will not dial. */
const FETCH_BAD_PORTS = [6665, 6666, 6667, 6668, 6669, 6000];

/** The environment of a shell with none of the project's variables set, plus `vars`. */
function shellEnv(vars: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NX_DAEMON: 'false', NX_NO_CLOUD: 'true', ...vars };
}

function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = output().match(pattern);
      if (match) {
        clearInterval(timer);
        clearTimeout(deadline);
        resolve(match);
      }
    };
    const timer = setInterval(check, 100);
    const deadline = setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${output().slice(-4000)}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      check();
      clearInterval(timer);
      clearTimeout(deadline);
      reject(new Error(`exited ${code} before ${pattern}; output:\n${output().slice(-4000)}`));
    });
  });
}

describe('npm start on ports of its own', () => {
  let child: ChildProcess;
  let output = '';
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    for (const name of ['TRANSACTIONS_PORT', 'CALLBACK_PORT', 'UI_PORT', 'DEMO_RECEIVER_PORT']) ports[name] = await freePort();
    // A port that fetch() refuses (the WHATWG "bad ports"): GATEWAY_PORT may name any port.
    ports.GATEWAY_PORT = await freePortAmong(FETCH_BAD_PORTS);
    child = spawn(process.execPath, [START], {
      cwd: ROOT,
      env: shellEnv({
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        DATABASE_URL: `postgresql://postgres@127.0.0.1:5432/${database}`,
        AMQP_PREFIX: prefix,
        SANDBOX_SETTLE_MS: '1000',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
  });

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await dropDatabase(database);
    await deleteBrokerObjects(prefix, loadCallbackConfig({}).retryDelaysMs);
  });

  it('prints a demo token that creates a deposit through the gateway, shows it in the viewer and delivers its callbacks', async () => {
    const [, token] = await waitForOutput(child, () => output, /serviceApiToken: (\S+)/, 150_000);
    const gateway = `http://127.0.0.1:${ports.GATEWAY_PORT}`;
    expect(output).toContain(`API            ${gateway}/api`);
    // undici's request, not fetch, which will not dial the gateway's port (FETCH_BAD_PORTS).
    const created = await request(`${gateway}/api/createDeposit`, {
      method: 'POST',
      headers: { serviceApiToken: token!, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '10.00', currency: 'USD', orderId: `start-${id}` }),
    });
    expect(created.statusCode).toBe(201);
    const tx = (await created.body.json()) as { id: string };

    const viewer = await request(`${gateway}/ui/viewTransaction?id=${tx.id}`, { headers: { serviceApiToken: token!, accept: 'application/json' } });
    expect(viewer.statusCode).toBe(200);
    expect(((await viewer.body.json()) as { transaction: { id: string } }).transaction.id).toBe(tx.id);

    await waitForOutput(child, () => output, new RegExp(`demo-receiver +\\| deposit\\.pending evt_\\S+ seq=1 tx=${tx.id}`), 20_000);
    await waitForOutput(child, () => output, new RegExp(`demo-receiver +\\| deposit\\.completed evt_\\S+ seq=2 tx=${tx.id}`), 20_000);
  });

  it("prints the services' logs for a person (pino-pretty), never as JSON lines", () => {
    // How many lines a healthy start logs depends on LOG_LEVEL; whatever it logs is not JSON.
    expect(output).not.toMatch(/^\S+ +\| \{"level"/m);
    for (const line of output.split('\n').filter((l) => /^(api-gateway|transactions-svc|callback-svc|ui) +\| \[/.test(l))) {
      expect(line).toMatch(/\| \[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL)( \([^)]*\))?: /);
    }
  });

  it('stops every service and exits 0 on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const name of ['GATEWAY_PORT', 'TRANSACTIONS_PORT', 'CALLBACK_PORT', 'UI_PORT']) {
      await expect(request(`http://127.0.0.1:${ports[name]}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    }
  });
});

describe('npm start without its servers', () => {
  const run = (vars: Record<string, string>) => spawnSync(process.execPath, [START], { cwd: ROOT, env: shellEnv(vars), encoding: 'utf8', timeout: 30_000 });

  it('names PostgreSQL and its address when PostgreSQL cannot be reached, and exits non-zero', async () => {
    const port = await freePort();
    const res = run({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/x`, AMQP_URL: DEFAULT_AMQP_URL });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain(`PostgreSQL is not reachable at 127.0.0.1:${port} (DATABASE_URL)`);
    expect(res.stderr).not.toContain('RabbitMQ');
  });

  it('names PostgreSQL and its address when it answers but refuses the login, before building anything, and exits non-zero', () => {
    const res = run({ DATABASE_URL: 'postgresql://no_such_role_dw@127.0.0.1:5432/x', AMQP_URL: DEFAULT_AMQP_URL });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('PostgreSQL at 127.0.0.1:5432 (DATABASE_URL) did not accept a connection: role "no_such_role_dw" does not exist');
    expect(res.stderr).not.toContain('building');
  });

  it('names the service, its address and its variable when another process holds its port, before building anything, and exits non-zero', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const held = (holder.address() as net.AddressInfo).port;
      const res = run({ UI_PORT: String(held) });
      expect(res.status).not.toBe(0);
      expect(res.stderr).toContain(`ui cannot listen on 127.0.0.1:${held} (UI_PORT, INTERNAL_HOST): another process is listening there`);
      expect(res.stderr).not.toContain('building');
    } finally {
      holder.close();
    }
  });

  it('names RabbitMQ and its address when RabbitMQ cannot be reached, and exits non-zero', async () => {
    const port = await freePort();
    const res = run({ AMQP_URL: `amqp://guest:guest@127.0.0.1:${port}` });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain(`RabbitMQ is not reachable at 127.0.0.1:${port} (AMQP_URL)`);
    expect(res.stderr).not.toContain('PostgreSQL');
  });

  it('names RabbitMQ when its address answers but is not RabbitMQ, or refuses the credentials, and exits non-zero', () => {
    const notRabbit = run({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:5432' }); // PostgreSQL's port
    expect(notRabbit.status).not.toBe(0);
    expect(notRabbit.stderr).toContain('RabbitMQ at 127.0.0.1:5432 (AMQP_URL) did not accept a connection');
    const wrongPassword = run({ AMQP_URL: `amqp://guest:not-the-password@127.0.0.1:5672` });
    expect(wrongPassword.status).not.toBe(0);
    expect(wrongPassword.stderr).toMatch(/RabbitMQ at 127\.0\.0\.1:5672 \(AMQP_URL\) did not accept a connection: .*ACCESS.REFUSED/);
    expect(wrongPassword.stderr).not.toContain('not-the-password');
  });
});

describe('one service started alone with npm run', () => {
  it('stops when only the npm process gets SIGTERM (as a process manager sends it), exits 0 and frees its port', async () => {
    const port = await freePort();
    // npm passes a signal to its script's shell, which would not pass it on: the scripts exec.
    const child = spawn('npm', ['run', 'start:ui'], {
      cwd: ROOT,
      env: shellEnv({
        UI_PORT: String(port),
        HOST: '127.0.0.1',
        INTERNAL_AUTH_SECRETS: randomBytes(24).toString('hex'),
        TRANSACTIONS_URL: `http://127.0.0.1:${await freePort()}`,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    try {
      await waitForOutput(child, () => output, /Server listening at/, 120_000);
      expect((await request(`http://127.0.0.1:${port}/healthz`)).statusCode).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"shutting down"');
      await expect(request(`http://127.0.0.1:${port}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 150_000);
});
