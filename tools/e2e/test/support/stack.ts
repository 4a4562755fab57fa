/**
 * Starts the real system for a test file: its own database (created and migrated by the real
 * migrate CLI), its own AMQP prefix, the four built services on free ports. Nothing is mocked.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import amqp from 'amqplib';
import pg from 'pg';
import { DEFAULT_AMQP_URL, loadCallbackConfig, serviceNodeOptions } from '@dw/config';
import { callbackTopology, deleteTopology, mergeTopologies, tokenTopology } from '@dw/messaging';
import { dropTestDatabase, testPrefix } from '@dw/testing';

export const ROOT = path.resolve(__dirname, '../../../..');
const PG_ADMIN = 'postgresql://postgres@127.0.0.1:5432/postgres';
export const AMQP_URL = DEFAULT_AMQP_URL;
export const ADMIN_TOKEN = 'e2e-admin-token';

export type ServiceName = 'api-gateway' | 'transactions-svc' | 'callback-svc' | 'ui';
const PORT_ENV: Record<ServiceName, string> = {
  'api-gateway': 'GATEWAY_PORT',
  'transactions-svc': 'TRANSACTIONS_PORT',
  'callback-svc': 'CALLBACK_PORT',
  ui: 'UI_PORT',
};

export interface Merchant {
  merchantId: string;
  apiToken: string;
  callbackSigningSecret: string;
}

export interface Stack {
  env: Record<string, string>;
  ports: Record<ServiceName, number>;
  gateway: string;
  transactions: string;
  logs: Record<ServiceName, string[]>;
  /** A CLI of transactions-svc (dist/cli/…) with the stack's environment plus `overrides`. */
  cli(args: string[], overrides?: Record<string, string>): { status: number | null; stdout: string; stderr: string };
  /**
   * A merchant made by the CLI. Its credit limit lets it withdraw without funds (so tests of other
   * rules can create withdraws): E2E_CREDIT_LIMIT unless given; the ledger's tests give '0'.
   */
  createMerchant(name?: string, creditLimit?: string): Merchant;
  start(name: ServiceName): Promise<void>;
  /**
   * One more process of a service beside the stack's (a second gateway, say) on a free port, with
   * the stack's environment plus `overrides`; close() stops it too.
   */
  startExtra(name: ServiceName, overrides?: Record<string, string>): Promise<ExtraProcess>;
  /** The running service's process id (the bench samples its RSS), undefined when stopped. */
  pid(name: ServiceName): number | undefined;
  /** SIGTERM (default) and wait; resolves with the exit code. */
  stop(name: ServiceName, signal?: NodeJS.Signals): Promise<number | null>;
  /**
   * Stops everything and drops the stack's database and queues, after `npm run ledger:verify` has
   * checked the ledger the test left (it throws when anything differs). A test that writes
   * transactions by hand, outside the service, opts out.
   */
  close(options?: { verifyLedger?: boolean }): Promise<void>;
}

/** What a merchant of createMerchant may withdraw without funds, unless the test says otherwise. */
export const E2E_CREDIT_LIMIT = '999999999999999999.99999999'; // the largest amount there is

export interface ExtraProcess {
  url: string;
  logs: string[];
  stop(): Promise<number | null>;
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

/**
 * Ports for the stacks' services come from a block of this jest worker's own, below the kernel's
 * ephemeral range: a port is checked free and released, and the service listens on it a second or
 * two later, so a port the kernel hands out (bind to 0, an outgoing connection's local port) could
 * be handed out again in between. Two stacks given one port would not fail: the later service
 * cannot listen, the earlier one answers its health check, and the later stack's requests reach
 * the other stack (the likeliest cause of a 404 "No such merchant" that flat-cost once got from
 * /ui/endpointHealth in CI, for a merchant that had just created deposits). Blocks never overlap,
 * and within one worker the stacks start one after another.
 */
const PORT_BASE = 20_000;
const PORT_BLOCKS = 14; // 20000–32599, below Linux's default ephemeral range (32768–60999)
/** This process's ports: [first, first + size), or undefined where the kernel's range reaches into the blocks. */
export const PORT_BLOCK = ((): { first: number; size: number } | undefined => {
  const size = 900;
  let ephemeralLow = 0;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // not Linux: the kernel's choice
  }
  if (ephemeralLow <= PORT_BASE + PORT_BLOCKS * size) return undefined;
  return { first: PORT_BASE + (Number(process.env.JEST_WORKER_ID ?? 0) % PORT_BLOCKS) * size, size };
})();
let portOffset = process.pid; // where this process starts in its block

/** Whether something can listen on 127.0.0.1:`port` now (0: the kernel's choice); resolves with the port or undefined. */
function listenable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const { port: got } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(got));
    });
  });
}

/** The first of `ports` that something can listen on now (for a test that needs a particular kind of port). */
export async function freePortAmong(ports: readonly number[]): Promise<number> {
  for (const port of ports) if ((await listenable(port)) !== undefined) return port;
  throw new Error(`none of ports ${ports.join(', ')} is free`);
}

export async function freePort(): Promise<number> {
  // Where the kernel's range reaches into the blocks, fall back to its choice (the old race).
  if (!PORT_BLOCK) {
    const port = await listenable(0);
    if (port === undefined) throw new Error('no free port');
    return port;
  }
  const { first, size } = PORT_BLOCK;
  for (let tried = 0; tried < size; tried++) {
    const port = first + (portOffset++ % size);
    if ((await listenable(port)) !== undefined) return port;
  }
  throw new Error(`no free port in ${first}–${first + size - 1}`);
}

/** Calls `fn` until `ok` holds for its value or `timeoutMs` has passed; returns the last value. */
export async function eventually<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until `count` of the merchant's deliveries have ended `skipped` (it had no callback URL):
 * what a recovery then restarts. Read from the stack's database; resolves with the count reached.
 */
export async function skippedDeliveries(stack: Pick<Stack, 'env'>, merchantId: string, count: number, timeoutMs = 60_000): Promise<number> {
  const SKIPPED = `SELECT count(*)::int AS n FROM callback_deliveries d JOIN transaction_events e ON e.id = d.event_id
                    WHERE e.merchant_id = $1 AND d.status = 'skipped'`;
  return withDatabase(stack, (db) =>
    eventually(async () => (await db.query(SKIPPED, [merchantId])).rows[0].n as number, (n) => n >= count, timeoutMs),
  );
}

/**
 * Runs `fn` with a client of the stack's own database, closed afterwards: for tests that write
 * history by hand or read what the services wrote.
 */
export async function withDatabase<T>(stack: Pick<Stack, 'env'>, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/**
 * Resolves once `url`/healthz answers, and fails at once, with the service's log, if the process
 * exits first (a port it could not listen on, a bad setting) rather than trusting whatever answers.
 */
async function answering(child: ChildProcess, name: string, url: string, log: string[]): Promise<void> {
  let onExit!: (code: number | null, signal: NodeJS.Signals | null) => void;
  const exited = new Promise<never>((_, reject) => {
    onExit = (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before ${url}/healthz answered:\n${log.join('')}`));
    child.once('exit', onExit);
  });
  try {
    await Promise.race([waitFor(`${url}/healthz`), exited]);
  } finally {
    child.off('exit', onExit);
  }
}

export async function waitFor(url: string, status = 200, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === status) return;
      last = String(res.status);
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${status} in time (last: ${last})`);
}

export async function startStack(label: string, overrides: Record<string, string> = {}): Promise<Stack> {
  const hex = randomBytes(4).toString('hex');
  const id = `${label.replace(/\W/g, '_')}_${hex}`;
  const ports = {} as Record<ServiceName, number>;
  for (const name of Object.keys(PORT_ENV) as ServiceName[]) ports[name] = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    CHECKPOINT_DISABLE: '1',
    // The services run with their production heap bound (libs/config/src/node-options.json).
    NODE_OPTIONS: serviceNodeOptions.NODE_OPTIONS,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: `postgresql://postgres@127.0.0.1:5432/dw_e2e_${id}`,
    AMQP_URL,
    AMQP_PREFIX: testPrefix(`e2e.${label.replace(/\W/g, '_')}`, hex),
    ADMIN_TOKEN,
    // The gateway's proof key, the stack's own: a request that reached another stack's service
    // (a port given to two stacks) is refused there, as a deployment's would be, not served.
    INTERNAL_AUTH_SECRETS: `e2e-internal-auth-${randomBytes(24).toString('hex')}`,
    // Every test request comes from 127.0.0.1; tests of the per-address limit set their own.
    BAD_TOKEN_LIMIT_PER_MINUTE: '100000',
    PUBLIC_LIMIT_PER_MINUTE: '100000',
    GATEWAY_CONNECTIONS_PER_ADDRESS: '100000',
    CALLBACK_ALLOW_PRIVATE_HOSTS: 'true',
    SANDBOX_SETTLE_MS: '0',
    SHUTDOWN_TIMEOUT_MS: '5000',
    TRANSACTIONS_URL: `http://127.0.0.1:${ports['transactions-svc']}`,
    UI_URL: `http://127.0.0.1:${ports.ui}`,
    ...Object.fromEntries(Object.entries(PORT_ENV).map(([n, e]) => [e, String(ports[n as ServiceName])])),
    ...overrides,
  };
  const children = new Map<ServiceName, ChildProcess>();
  const extras = new Set<ChildProcess>();
  const spawnService = (name: ServiceName, childEnv: Record<string, string>, log: string[]) => {
    const child = spawn(process.execPath, ['--require', './dist/instrumentation.js', 'dist/main.js'], {
      cwd: path.join(ROOT, 'apps', name),
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => log.push(String(d)));
    child.stderr!.on('data', (d) => log.push(String(d)));
    return child;
  };
  const logs = { 'api-gateway': [], 'transactions-svc': [], 'callback-svc': [], ui: [] } as Record<ServiceName, string[]>;

  const cli = (args: string[], overrides: Record<string, string> = {}) => {
    const res = spawnSync(process.execPath, args, { cwd: path.join(ROOT, 'apps/transactions-svc'), env: { ...env, ...overrides }, encoding: 'utf8' });
    return { status: res.status, stdout: res.stdout, stderr: res.stderr };
  };
  const migrated = cli(['dist/cli/migrate.js', 'deploy']);
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);

  const stack: Stack = {
    env,
    ports,
    logs,
    gateway: `http://127.0.0.1:${ports['api-gateway']}`,
    transactions: `http://127.0.0.1:${ports['transactions-svc']}`,
    cli,
    createMerchant(name = 'E2E merchant', creditLimit = E2E_CREDIT_LIMIT) {
      const res = cli(['dist/cli/merchant.js', 'create', '--name', name, '--credit-limit', creditLimit]);
      if (res.status !== 0) throw new Error(`merchant create failed: ${res.stderr}`);
      return JSON.parse(res.stdout) as Merchant;
    },
    async start(name) {
      const child = spawnService(name, env, logs[name]);
      children.set(name, child);
      await answering(child, name, `http://127.0.0.1:${ports[name]}`, logs[name]);
    },
    async startExtra(name, overrides = {}) {
      const port = await freePort();
      const log: string[] = [];
      const child = spawnService(name, { ...env, [PORT_ENV[name]]: String(port), ...overrides }, log);
      extras.add(child);
      const url = `http://127.0.0.1:${port}`;
      try {
        await answering(child, name, url, log);
      } catch (err) {
        await stopChild(child);
        throw new Error(`${(err as Error).message}\n${log.join('')}`);
      }
      return {
        url,
        logs: log,
        stop: async () => {
          extras.delete(child);
          return stopChild(child);
        },
      };
    },
    pid(name) {
      const child = children.get(name);
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    async stop(name, signal = 'SIGTERM') {
      const child = children.get(name);
      if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill(signal);
      const code = await exited;
      children.delete(name);
      return code;
    },
    async close({ verifyLedger = true } = {}) {
      await Promise.all([...extras].map((c) => stopChild(c)));
      await Promise.all([...children.keys()].map((n) => stack.stop(n)));
      const verified = verifyLedger ? cli(['dist/cli/ledger.js', 'verify']) : undefined;
      await dropDatabase(`dw_e2e_${id}`);
      await deleteBrokerObjects(env.AMQP_PREFIX!, loadCallbackConfig(env).retryDelaysMs);
      if (verified && verified.status !== 0) throw new Error(`ledger:verify after the test: ${verified.stdout}${verified.stderr}`);
    },
  };

  try {
    await stack.start('transactions-svc');
    await Promise.all([stack.start('callback-svc'), stack.start('ui')]);
    await stack.start('api-gateway');
    // Ready, not only alive: callback-svc is ready once its queues are declared and consumed, so a
    // broker that refuses them fails the stack here, with the services' logs, rather than every
    // test that waits for a callback.
    await Promise.all([waitFor(`${stack.gateway}/readyz`), waitFor(`http://127.0.0.1:${ports['callback-svc']}/readyz`)]);
  } catch (err) {
    await stack.close();
    throw new Error(`${(err as Error).message}\n${JSON.stringify(logs, null, 1)}`);
  }
  return stack;
}

export async function dropDatabase(name: string) {
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await dropTestDatabase(client, name);
  } finally {
    await client.end();
  }
}

/** Deletes the queues and exchanges a stack declared (the topology's own list of them). */
export async function deleteBrokerObjects(prefix: string, retryDelaysMs: number[]) {
  const topology = mergeTopologies(callbackTopology({ prefix, retryDelaysMs }), tokenTopology(prefix));
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    await deleteTopology(ch, topology);
    await ch.close();
  } finally {
    await conn.close();
  }
}

/** fetch against the gateway with the merchant's token. */
export function api(stack: Stack, token: string | undefined) {
  return async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(stack.gateway + url, {
      method,
      headers: {
        ...(token === undefined ? {} : { serviceApiToken: token }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}
