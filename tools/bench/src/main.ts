/**
 * `npm run bench [-- --quick] [-- --only create,drain,latency,flat,money,isolation,pages,readers,public,memory,notify,profile,cost]`
 *
 * Starts what it measures — the four built services (their own database and AMQP prefix per
 * stack), a callback receiver, a single-insert Fastify baseline, a load generator and a raw POST loop,
 * each in its own process — runs each figure of issue 7 beside its baseline with alternated A/B
 * rounds, and prints one table. `--only cost` adds issue 20's baselines that do the same work (a
 * one-process create, a bare forwarding proxy) and prints its targets with their ratios. A full run writes docs/benchmarks.svg. The machine is shared: read
 * the ratios, not the absolute numbers.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, type Stack } from '../../e2e/test/support/stack';
import { ratioChart } from './chart';
import { rssText, setReceiverBase, startBenchStack, type Ctx, type Options } from './context';
import { killStarted, startBaseline, startReceiver } from './processes';
import { costFigure, forwardFigure } from './cost';
import { pageIsolationFigure } from './page-isolation';
import { publicFloodFigure } from './public-flood';
import { pageMemoryFigure } from './page-memory';
import { profileFigure } from './profile';
import { createFigure, drainFigure, flatFigure, isolationFigure, latencyFigure, memoryFigure, moneyFigure, notifyFigure, recoveryIsolationFigure } from './scenarios';
import { markdownTable } from './stats';

const SCENARIOS = ['create', 'drain', 'latency', 'flat', 'money', 'isolation', 'pages', 'readers', 'public', 'memory', 'notify', 'profile', 'cost'];
const MAX_RUN_MS = 30 * 60_000;

function parseArgs(argv: string[]): Options & { write: boolean } {
  const quick = argv.includes('--quick');
  const onlyArg = argv.flatMap((a, i) => (a === '--only' ? [argv[i + 1] ?? ''] : a.startsWith('--only=') ? [a.slice(7)] : []));
  const only = new Set(onlyArg.flatMap((s) => s.split(',')).filter(Boolean));
  for (const s of only) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; one of ${SCENARIOS.join(', ')}`);
  const unknown = argv.filter((a, i) => a.startsWith('--') && !['--quick', '--only', '--no-write'].includes(a) && !a.startsWith('--only=') && argv[i - 1] !== '--only');
  if (unknown.length) throw new Error(`unknown option ${unknown.join(' ')}`);
  return { quick, only: only.size ? only : new Set(SCENARIOS), write: !quick && !only.size && !argv.includes('--no-write') };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const t0 = new Date();
  const log = (msg: string) => console.error(`[bench +${Math.round((Date.now() - started) / 1000)}s] ${msg}`);
  const watchdog = setTimeout(() => {
    console.error(`bench: over ${MAX_RUN_MS / 60_000} min, giving up`);
    killStarted();
    process.exit(2);
  }, MAX_RUN_MS);
  watchdog.unref();
  const id = randomBytes(4).toString('hex');
  const receiver = await startReceiver();
  setReceiverBase(receiver.url);
  const baseline = await startBaseline(id);
  const ctx: Ctx = { opts, receiver, baseline, rows: [], log };
  const has = (s: string) => opts.only.has(s);
  let profileSpans = '';
  let main: Stack | undefined;
  const load0 = os.loadavg();
  try {
    if (has('create') || has('drain') || has('latency') || has('flat')) {
      log('starting the stack');
      main = await startBenchStack('main');
      if (has('create')) ctx.rows.push(...(await createFigure(ctx, main, 'empty db')));
      if (has('drain')) ctx.rows.push(...(await drainFigure(ctx, main, 'empty db')));
      if (has('latency')) ctx.rows.push(await latencyFigure(ctx, main));
      if (has('flat')) ctx.rows.push(...(await flatFigure(ctx, main, opts.quick ? 20_000 : 1_000_000, opts.quick ? '20k history' : '1M history')));
      await main.close({ verifyLedger: false });
      main = undefined;
    }
    if (has('cost')) {
      log('starting the stack for issue 20 (cost)');
      const stack = await startBenchStack('cost');
      try {
        ctx.rows.push(...(await costFigure(ctx, stack, id)));
        ctx.rows.push(await latencyFigure(ctx, stack, 1000, 50));
      } finally {
        await stack.close({ verifyLedger: false });
      }
      ctx.rows.push(await forwardFigure(ctx));
    }
    if (has('money')) ctx.rows.push(await moneyFigure(ctx));
    if (has('isolation')) {
      for (const mode of ['hang', 'slow', '429', '503'] as const) ctx.rows.push(await isolationFigure(ctx, mode));
      ctx.rows.push(await recoveryIsolationFigure(ctx));
    }
    if (has('pages')) ctx.rows.push(await pageIsolationFigure(ctx));
    if (has('readers')) ctx.rows.push(await pageMemoryFigure(ctx));
    if (has('public')) ctx.rows.push(await publicFloodFigure(ctx));
    if (has('memory')) ctx.rows.push(await memoryFigure(ctx));
    if (has('notify')) ctx.rows.push(await notifyFigure(ctx));
    if (has('profile')) {
      const p = await profileFigure(ctx);
      ctx.rows.push(...p.rows);
      profileSpans = p.spans;
    }
  } finally {
    await main?.close({ verifyLedger: false }).catch(() => undefined);
    await baseline.close().catch(() => undefined);
    await receiver.close().catch(() => undefined);
    killStarted();
    clearTimeout(watchdog);
  }

  const cpus = os.cpus();
  const notes = [
    `${t0.toISOString()} · ${opts.quick ? 'quick' : 'full'} run · ${Math.round((Date.now() - started) / 1000)} s`,
    `${cpus.length} × ${cpus[0]?.model ?? '?'} · ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB · Node ${process.version} · load average ${load0.map((l) => l.toFixed(1)).join(' ')} at start, ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at end`,
  ];
  const table = markdownTable(
    ['figure', 'ours', 'baseline / target', 'ratio', 'ours p50/p99 ms', 'baseline p50/p99 ms', 'max RSS MB gw/tx/cb/ui', 'notes'],
    ctx.rows.map((r) => [r.figure, r.ours, r.baseline ?? '', r.ratio ?? '', r.oursLatency ?? '', r.baselineLatency ?? '', rssText(r.rss), r.note ?? '']),
  );
  console.log(notes.join('\n') + '\n\n' + table + '\n');
  if (profileSpans) console.log('Spans of the profile run (service, name, count, p50, p99):\n' + profileSpans + '\n');
  if (opts.write) {
    const file = path.join(ROOT, 'docs/benchmarks.svg');
    writeFileSync(file, ratioChart(ctx.rows, `npm run bench, ${t0.toISOString().slice(0, 10)}, ${cpus.length} cores`));
    console.error(`wrote ${path.relative(ROOT, file)}`);
  }
}

process.on('SIGINT', () => {
  killStarted();
  process.exit(130);
});

main().catch((err) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
