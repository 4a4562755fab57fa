/**
 * The bench's own processes: the receiver, the baseline server, the raw POST loop and the load
 * generator, each forked or spawned so that none of them shares an event loop with
 * another or with the bench's timers. All listen on 127.0.0.1 only.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import amqp from 'amqplib';
import { serviceNodeOptions } from '@dw/config';
import { SERVICE_V8_FLAGS } from '@dw/config/v8-flags';
import { createTestDatabase } from '@dw/db/testing';
import { testPrefix } from '@dw/testing';
import { callbackTopology, deleteTopology } from '@dw/messaging';
import { AMQP_URL } from '../../e2e/test/support/stack';
import type { Arrival } from './receiver-process';

/** How a child starts: the parent's environment and node arguments unless given. */
interface Launch {
  env?: NodeJS.ProcessEnv;
  execArgv?: string[];
}

/**
 * Baselines run with the services' own heap bound (libs/config/src/node-options.json) and V8 flags
 * (libs/config/src/v8-flags.ts, which the services' preload applies), for fairness.
 */
const AS_SERVICES: Launch = {
  env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${serviceNodeOptions.NODE_OPTIONS}`.trim() },
  execArgv: [...process.execArgv, ...SERVICE_V8_FLAGS],
};

const PG_ADMIN = 'postgresql://postgres@127.0.0.1:5432/postgres';
const started = new Set<ChildProcess>();

/** Forks a .ts file of this folder (with the same tsx loader) and waits for its first message. */
async function forkReady<T>(file: string, args: string[] = [], { env, execArgv }: Launch = {}): Promise<{ child: ChildProcess; first: T }> {
  const child = fork(path.join(__dirname, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env, execArgv });
  started.add(child);
  child.once('exit', () => started.delete(child));
  const first = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not answer within 120 s`)), 120_000);
    child.once('message', (m) => (clearTimeout(timer), resolve(m as T)));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`${file} exited with ${code}`))));
  });
  return { child, first };
}

/** Ends one forked process and waits for its exit. */
async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Ends every process the bench started (only those: by their own handles). */
export function killStarted(): void {
  for (const child of started) child.kill('SIGTERM');
}

export interface Receiver {
  url: string;
  /** Arrivals by tag, in arrival order. */
  arrivals(tag: string): Arrival[];
  /** Distinct transaction ids of tag's `type` callbacks with their first arrival time. */
  firstArrivals(tag: string, type?: string): Map<string, number>;
  /** Resolves true once `count` distinct ids arrived under tag, false at the deadline. */
  waitForIds(tag: string, count: number, timeoutMs: number): Promise<boolean>;
  pid: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const { child, first } = await forkReady<{ url: string }>('receiver-process.ts');
  const byTag = new Map<string, Arrival[]>();
  const firsts = new Map<string, Map<string, number>>();
  const listeners = new Set<() => void>();
  child.on('message', (m: { arrivals?: Arrival[] }) => {
    for (const a of m.arrivals ?? []) {
      const [tag, id, , at] = a;
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(a);
      if (!firsts.has(tag)) firsts.set(tag, new Map());
      const seen = firsts.get(tag)!;
      if (id && !seen.has(id)) seen.set(id, at);
    }
    for (const l of listeners) l();
  });
  return {
    url: first.url,
    pid: child.pid!,
    arrivals: (tag) => byTag.get(tag) ?? [],
    firstArrivals(tag, type) {
      if (!type) return firsts.get(tag) ?? new Map();
      const out = new Map<string, number>();
      for (const [t, id, ty, at] of byTag.get(tag) ?? []) if (t === tag && ty === type && id && !out.has(id)) out.set(id, at);
      return out;
    },
    waitForIds(tag, count, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          if ((firsts.get(tag)?.size ?? 0) >= count) done(true);
        };
        const timer = setTimeout(() => done(false), timeoutMs);
        const done = (ok: boolean) => {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(ok);
        };
        listeners.add(check);
        check();
      });
    },
    async close() {
      await stopChild(child);
    },
  };
}

export interface Baseline {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** Creates the baseline's own database and table, and starts the baseline server on it. */
export async function startBaseline(id: string): Promise<Baseline> {
  const dbName = `dw_bench_baseline_${id}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await admin.end();
  const url = `postgresql://postgres@127.0.0.1:5432/${dbName}`;
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`CREATE TABLE deposits (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    amount numeric NOT NULL, currency varchar(10) NOT NULL, order_id varchar(128) NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now())`);
  await db.end();
  const { child, first } = await forkReady<{ url: string }>('baseline-insert-server.ts', [url], AS_SERVICES);
  return {
    url: first.url,
    pid: child.pid!,
    async close() {
      await stopChild(child);
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A raw undici POST loop to `url` in its own process; POSTs per second. */
export async function rawPostLoop(url: string, count: number, concurrency: number): Promise<number> {
  const { first } = await forkReady<{ perSecond: number }>('raw-post-loop.ts', [url, String(count), String(concurrency)]);
  return first.perSecond;
}

export interface LoadResult {
  perSecond: number;
  ok: number;
  other: number;
  p50: number;
  p99: number;
}

/** Closed-loop load (load-process.ts, its own process): `connections` clients for `seconds`. */
export async function closedLoop(
  url: string,
  opts: { connections: number; seconds: number; token?: string; tokens?: string[]; kind?: 'deposit' | 'withdraw' },
): Promise<LoadResult> {
  const tokens = opts.tokens ?? (opts.token ? [opts.token] : []);
  const args = [url, String(opts.connections), String(opts.seconds), tokens.join(','), opts.kind ?? 'deposit'];
  return (await forkReady<LoadResult>('load-process.ts', args)).first;
}

/** Open-loop load (open-loop-process.ts, its own process): `rate` deposits a second for `seconds`. */
export async function openLoop(url: string, opts: { rate: number; seconds: number; token: string }): Promise<LoadResult> {
  return (await forkReady<LoadResult>('open-loop-process.ts', [url, String(opts.rate), String(opts.seconds), opts.token])).first;
}

/** VmRSS of a process in MB (undefined once it is gone). */
export function rssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface SameWork {
  url: string;
  /** The serviceApiToken its one merchant answers to. */
  token: string;
  /** Its processes by name, for the CPU sampler. */
  pids: Record<string, number>;
  close(): Promise<void>;
}

/**
 * Issue 20's same-work baseline (same-work-server.ts) on its own migrated database (the product's
 * migrations, via @dw/db/testing) and its own queues, delivering to `callbackUrl`. `split`: the same
 * code in the product's three processes (a bare proxy in front, the create side with its relay, the
 * deliverer), so that it costs the hops and nothing else that the product adds.
 */
export async function startSameWork(id: string, callbackUrl: string, { split = false } = {}): Promise<SameWork> {
  const name = split ? 'samesplit' : 'samework';
  const db = await createTestDatabase(`bench_${name}_${id}`);
  const prefix = testPrefix(`bench.${name}`, id);
  const args = (role: string) => [db.url, AMQP_URL, prefix, callbackUrl, role];
  const children: ChildProcess[] = [];
  const pids: Record<string, number> = {};
  let proxy: Forked | undefined;
  const stop = async () => {
    await proxy?.close();
    for (const child of children) await stopChild(child);
  };
  try {
    const create = await forkReady<{ url: string; token: string }>('same-work-server.ts', args(split ? 'create' : 'whole'), AS_SERVICES);
    children.push(create.child);
    pids[split ? 'split: create' : 'same-work'] = create.child.pid!;
    let url = create.first.url;
    if (split) {
      const deliver = await forkReady<object>('same-work-server.ts', args('deliver'), AS_SERVICES);
      children.push(deliver.child);
      pids['split: deliver'] = deliver.child.pid!;
      proxy = await startBareProxy(url);
      pids['split: proxy'] = proxy.pid;
      url = proxy.url;
    }
    return {
      url,
      token: create.first.token,
      pids,
      async close() {
        await stop();
        const conn = await amqp.connect(AMQP_URL);
        const ch = await conn.createChannel();
        await deleteTopology(ch, callbackTopology({ prefix, retryDelaysMs: [1000] }));
        await ch.close();
        await conn.close();
        await db.drop();
      },
    };
  } catch (err) {
    await stop();
    await db.drop();
    throw err;
  }
}

export interface Forked {
  url: string;
  pid: number;
  close(): Promise<void>;
}

async function forkServer(file: string, args: string[]): Promise<Forked> {
  const { child, first } = await forkReady<{ url: string }>(file, args, AS_SERVICES);
  return {
    url: first.url,
    pid: child.pid!,
    close: () => stopChild(child),
  };
}

/** Issue 20: an upstream answering 201 to every POST /api/* (echo-upstream-server.ts). */
export const startEchoUpstream = () => forkServer('echo-upstream-server.ts', []);
/** Issue 20: Fastify + @fastify/reply-from alone, forwarding /api/* to `upstream` (proxy-server.ts). */
export const startBareProxy = (upstream: string) => forkServer('proxy-server.ts', [upstream]);
