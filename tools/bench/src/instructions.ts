/**
 * `npm run bench:instructions [-- --warm 50000 --requests 3000 --rounds 2 --cache]`: issue 20's gateway
 * figure counted in instructions instead of CPU seconds. The gateway and the bare proxy
 * (proxy-server.ts) each run under valgrind's callgrind in front of the same echo upstream
 * (echo-upstream-server.ts), in alternated rounds. Each is first warmed with `--warm` forwarded
 * creates (V8 still compiles through the first 30,000 or so: docs/benchmarks.md), then callgrind
 * counts the instructions of the process, every thread of it, over `--requests` creates sent on 8
 * keep-alive connections, and the figure is that count per create.
 *
 * Why: this machine's CPU seconds drift by 2× from hour to hour and with its neighbours; an
 * instruction count does not (the same binary, inputs and flags give the same count within a few
 * percent, whatever else runs). It leaves out what instructions cost (cache misses, the kernel's
 * share of socket I/O), so it is printed beside the CPU figure of `npm run bench -- --only cost`,
 * not instead of it. `--cache` adds callgrind's cache simulation with this machine's sizes (32 KiB
 * L1 for code and for data, 1 MiB L2 as the last level) and prints the misses per create: what the
 * instructions' count leaves out. BENCH_STACK_ENV (a JSON object) adds to the gateway's environment,
 * to count a setting in alternated runs. Needs valgrind (on PATH); about 3 minutes a round and
 * process (5 with --cache).
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serviceNodeOptions } from '@dw/config';
import { SERVICE_V8_FLAGS } from '@dw/config/v8-flags';
import { testPrefix } from '@dw/testing';
import { AMQP_URL, freePort } from '../../e2e/test/support/stack';
import { gatewayClient } from './load';
import { startEchoUpstream } from './processes';
import { median, ratio } from './stats';

const ROOT = path.join(__dirname, '..', '..', '..');
const arg = (name: string, def: number) => Number(process.argv.find((_, i) => process.argv[i - 1] === name) ?? def);
const WARM = arg('--warm', 50_000);
const REQUESTS = arg('--requests', 3_000);
const ROUNDS = arg('--rounds', 2);
const CONNECTIONS = 8;
/**
 * V8 compiles and collects on threads of its own, which valgrind runs one at a time: how far the
 * compiler got by the end of the warm-up then depended on valgrind's scheduling, and the gateway's
 * count moved by a quarter between runs. On one thread V8 does the same work in the same order.
 * Both processes run so.
 */
const COUNT_FLAGS = ['--single-threaded'];
const CACHE = process.argv.includes('--cache');
/** This machine's caches (lscpu: AMD EPYC, 32 KiB L1i and L1d, 1 MiB L2 per core), L2 simulated as the last level. */
const CACHE_SIM = ['--cache-sim=yes', '--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,8,64'];
/** A well-formed token: the echo upstream resolves any token's hash to one merchant. */
const TOKEN = `dwk_${'b'.repeat(43)}`;
/**
 * valgrind names its control pipes after $HOST, and the gateway's configuration reads HOST as its
 * listening address: callgrind_control finds the process only when both see the same value.
 */
const HOST = '127.0.0.1';

interface Counted {
  url: string;
  child: ChildProcess;
  outDir: string;
}

function callgrindArgs(outDir: string): string[] {
  return ['-q', '--tool=callgrind', '--instr-atstart=no', ...(CACHE ? CACHE_SIM : []), `--callgrind-out-file=${path.join(outDir, 'callgrind.out')}`];
}

const env = (more: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  HOST,
  NODE_OPTIONS: serviceNodeOptions.NODE_OPTIONS,
  ...more,
});

/** The product's gateway (apps/api-gateway/dist, as deployed) under callgrind, forwarding to `upstream`. */
async function startGateway(upstream: string): Promise<Counted> {
  const outDir = mkdtempSync(path.join(tmpdir(), 'dw-callgrind-gw-'));
  const port = await freePort();
  const child = fork('dist/main.js', [], {
    cwd: path.join(ROOT, 'apps/api-gateway'),
    execPath: 'valgrind',
    execArgv: [...callgrindArgs(outDir), process.execPath, ...COUNT_FLAGS, '--require', './dist/instrumentation.js'],
    env: env({
      GATEWAY_PORT: String(port),
      LOG_LEVEL: 'error',
      RATE_LIMIT_PER_SECOND: '1000000',
      TRANSACTIONS_URL: upstream,
      UI_URL: upstream,
      AMQP_URL,
      AMQP_PREFIX: testPrefix('bench.instructions'),
      INTERNAL_AUTH_SECRETS: `bench-instructions-${'0'.repeat(32)}`,
      ...(JSON.parse(process.env.BENCH_STACK_ENV ?? '{}') as Record<string, string>),
    }),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = `http://${HOST}:${port}`;
  await answering(child, url, '/healthz');
  return { url, child, outDir };
}

/** The bare proxy (proxy-server.ts, with the tsx loader the bench runs under) under callgrind. */
async function startProxy(upstream: string): Promise<Counted> {
  const outDir = mkdtempSync(path.join(tmpdir(), 'dw-callgrind-px-'));
  const child = fork(path.join(__dirname, 'proxy-server.ts'), [upstream], {
    execPath: 'valgrind',
    execArgv: [...callgrindArgs(outDir), process.execPath, ...process.execArgv, ...SERVICE_V8_FLAGS, ...COUNT_FLAGS],
    env: env({}),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`proxy-server.ts under valgrind exited with ${code}`)));
  });
  return { url, child, outDir };
}

async function answering(child: ChildProcess, url: string, probe: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${url}: the process exited (${child.exitCode ?? child.signalCode}) before ${probe} answered`);
    try {
      if ((await fetch(url + probe)).ok) return;
    } catch {
      // not listening yet: valgrind starts a process about 50 times slower
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url}${probe} did not answer within 300 s`);
}

/** `count` creates on CONNECTIONS connections (load.ts's client); throws unless every one was answered 201. */
async function creates(url: string, count: number): Promise<void> {
  const client = gatewayClient(url, CONNECTIONS);
  const { failed } = await client.burst(TOKEN, count, CONNECTIONS);
  await client.close();
  if (failed) throw new Error(`${failed} of ${count} creates through ${url} were not answered 201`);
}

const control = (pid: number, ...args: string[]) => execFileSync('callgrind_control', [...args, String(pid)], { env: { ...process.env, HOST }, stdio: 'ignore' });

/** callgrind's event counts per create, by event name (Ir: instructions; with --cache, the misses too). */
type Events = Record<string, number>;

/** Sums the `totals:` lines of a run's dumps, by the names of their `events:` line. */
function eventsOf(dumps: string[], per: number): Events {
  const out: Events = {};
  for (const text of dumps) {
    const names = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
    const values = /^totals: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    names.forEach((name, i) => (out[name] = (out[name] ?? 0) + (values[i] ?? 0) / per));
  }
  return out;
}

/** Warms the process, then counts its instructions (and misses) over REQUESTS creates: the counts per create. */
async function eventsPerCreate(start: () => Promise<Counted>): Promise<Events> {
  const p = await start();
  try {
    await creates(p.url, WARM);
    control(p.child.pid!, '--instr=on');
    await creates(p.url, REQUESTS);
    control(p.child.pid!, '--instr=off');
    control(p.child.pid!, '--dump');
    return eventsOf(readdirSync(p.outDir).map((f) => readFileSync(path.join(p.outDir, f), 'utf8')), REQUESTS);
  } finally {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      const exited = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      await exited;
    }
    rmSync(p.outDir, { recursive: true, force: true });
  }
}

async function main() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not on PATH (Debian: apt-get install valgrind)');
  }
  const echo = await startEchoUpstream();
  const runs = { gateway: [] as Events[], 'bare proxy': [] as Events[] };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, start] of [['gateway', startGateway], ['bare proxy', startProxy]] as const) {
        const events = await eventsPerCreate(() => start(echo.url));
        runs[name].push(events);
        console.log(`round ${round}: ${name}: per forwarded create ${describe(events)}`);
      }
    }
  } finally {
    await echo.close();
  }
  const med = (name: keyof typeof runs, event: string) => median(runs[name].map((e) => e[event] ?? 0));
  const lines = Object.keys(runs.gateway[0] ?? {}).map((event) => {
    const [g, p] = [med('gateway', event), med('bare proxy', event)];
    return `  ${(EVENT_NAMES[event] ?? event).padEnd(30)} ${whole(g).padStart(9)} vs ${whole(p).padStart(9)}  ratio ${ratio(g, p).toFixed(2)}`;
  });
  console.log(
    `gateway vs bare proxy per forwarded create, medians (${WARM} warm, ${REQUESTS} counted, ${CONNECTIONS} connections, ${ROUNDS} rounds; the CPU-seconds target is ≤ 1.5):\n${lines.join('\n')}`,
  );
}

const whole = (n: number) => Math.round(n).toLocaleString('en');

/** callgrind's event names, in words; the misses' lines are what --cache adds. */
const EVENT_NAMES: Record<string, string> = {
  Ir: 'instructions',
  Dr: 'data reads',
  Dw: 'data writes',
  I1mr: 'L1 code misses',
  D1mr: 'L1 data read misses',
  D1mw: 'L1 data write misses',
  ILmr: 'L2 code misses',
  DLmr: 'L2 data read misses',
  DLmw: 'L2 data write misses',
};

function describe(events: Events): string {
  return Object.entries(events)
    .map(([event, n]) => `${EVENT_NAMES[event] ?? event} ${whole(n)}`)
    .join(', ');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
