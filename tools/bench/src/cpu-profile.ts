/**
 * `npm run bench:cpu-profile [-- --seconds 10] [-- --idle | --rate N | --pages]`: V8 CPU profiles of every
 * service under the create load (50 closed-loop connections through the gateway, callbacks
 * delivered to the bench's receiver; `--rate N`: N creates a second, open loop; `--idle`: no load;
 * `--pages`: no creates, one merchant reading JSON list pages of its largest rows as the pages
 * figure's merchant A does),
 * and per service the self time by package and by function. The
 * profiles (.cpuprofile, open them in Chrome's DevTools) are written to tools/bench/profiles/ or
 * BENCH_PROFILE_DIR. BENCH_NODE_OPTIONS replaces the services' NODE_OPTIONS (default: the heap
 * bound of libs/config/src/node-options.json), to profile another V8 setting.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { serviceNodeOptions } from '@dw/config';
import { merchantWithCallback, setReceiverBase, startBenchStack, SERVICES } from './context';
import { LOOPS, readPages, seedLargestRows } from './page-isolation';
import { closedLoop, openLoop, startReceiver } from './processes';
import { Pool } from 'undici';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const OUT = process.env.BENCH_PROFILE_DIR ?? path.join(__dirname, '..', 'profiles');

function where(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  return path.basename(url);
}

/** Self time per function and per package, in ms, from one .cpuprofile. */
function summarise(file: string, top: number): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') continue;
    total += us;
    const w = where(n.callFrame.url);
    const key = `${name} ${w}:${n.callFrame.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    pkg.set(w, (pkg.get(w) ?? 0) + us);
  }
  const rows = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  return [`busy ${Math.round(total / 1000)} ms`, ' by package:', ...rows(pkg), ' by function:', ...rows(fn)].join('\n');
}

async function main() {
  const arg = (name: string) => process.argv.find((_, i) => process.argv[i - 1] === name);
  const seconds = Number(arg('--seconds') ?? 10);
  const rate = arg('--rate') === undefined ? undefined : Number(arg('--rate'));
  mkdirSync(OUT, { recursive: true });
  for (const f of readdirSync(OUT).filter((f) => f.endsWith('.cpuprofile'))) rmSync(path.join(OUT, f));
  const receiver = await startReceiver();
  setReceiverBase(receiver.url);
  const stack = await startBenchStack('cpuprof', {
    NODE_OPTIONS: `${process.env.BENCH_NODE_OPTIONS ?? serviceNodeOptions.NODE_OPTIONS} --cpu-prof --cpu-prof-dir=${OUT}`,
  });
  const pids = new Map(SERVICES.map((s) => [stack.pid(s), s]));
  try {
    if (process.argv.includes('--idle')) {
      await new Promise((r) => setTimeout(r, seconds * 1000));
    } else if (process.argv.includes('--pages')) {
      const m = await merchantWithCallback(stack, null);
      await seedLargestRows(stack, m);
      const reader = new Pool(stack.gateway, { connections: LOOPS });
      const r = await readPages(reader, m.apiToken, new Promise((done) => setTimeout(done, seconds * 1000)));
      await reader.close();
      console.log(`${r.pages} pages (${(r.bytes / 1e6).toFixed(0)} MB) in ${r.seconds.toFixed(1)} s; ${r.other} not 200`);
    } else {
      const m = await merchantWithCallback(stack, '/ok/cpuprof');
      await closedLoop(stack.gateway, { connections: 50, seconds: 2, token: m.apiToken });
      const r = rate
        ? await openLoop(stack.gateway, { rate, seconds, token: m.apiToken })
        : await closedLoop(stack.gateway, { connections: 50, seconds, token: m.apiToken });
      console.log(`${r.ok} creates in ${seconds} s (${Math.round(r.ok / seconds)}/s)`);
    }
  } finally {
    for (const s of SERVICES) await stack.stop(s).catch(() => undefined);
    await stack.close({ verifyLedger: false }).catch(() => undefined);
    await receiver.close();
  }
  for (const f of readdirSync(OUT).filter((f) => f.endsWith('.cpuprofile'))) {
    const pid = Number(f.split('.')[3]); // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    const name = pids.get(pid) ?? `pid ${pid}`;
    console.log(`\n## ${name} (${f})\n${summarise(path.join(OUT, f), 25)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
