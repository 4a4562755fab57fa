/**
 * `npm run fuzz -- --n 100000 [--seed 1234] [--concurrency 8]`: the long form of the fuzz test
 * against the four built processes on a fresh database. Prints the count of 5xx and the first
 * findings with the seed that reproduces them; exits non-zero on any 5xx, any other contract
 * breach, or a process that no longer answers.
 */
import { startStack } from '../test/support/stack';
import { prepareFuzz, processesAlive, runFuzz, suspiciousLogLines } from './run-fuzz';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const requests = Number(arg('n') ?? 100_000);
  const seed = Number(arg('seed') ?? process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const concurrency = Number(arg('concurrency') ?? 8);
  if (!Number.isSafeInteger(requests) || requests < 1 || !Number.isSafeInteger(seed)) {
    throw new Error('usage: npm run fuzz -- --n <requests> [--seed <integer>] [--concurrency <n>]');
  }
  console.log(`fuzz: ${requests} requests, seed ${seed}, concurrency ${concurrency}`);
  const stack = await startStack('fuzz', { RATE_LIMIT_PER_SECOND: '1000000' });
  try {
    const ctx = await prepareFuzz(stack, seed);
    const report = await runFuzz(stack, ctx, {
      requests,
      concurrency,
      onProgress: (done) => done % 10_000 === 0 && console.log(`  ${done} requests…`),
    });
    const alive = await processesAlive(stack);
    const logged = suspiciousLogLines(stack);
    console.log(`done in ${report.seconds.toFixed(1)} s (${Math.round(report.requests / report.seconds)} requests/s)`);
    console.log(`status counts: ${JSON.stringify(report.byStatus)}`);
    for (const [endpoint, { count, ms }] of Object.entries(report.byEndpoint)) {
      console.log(`  ${endpoint}: ${count} requests, mean ${(ms / count).toFixed(1)} ms`);
    }
    console.log(`5xx: ${report.fiveXx}`);
    console.log(`contract breaches (5xx included): ${report.findingCount}`);
    for (const f of report.findings) console.log(`  #${f.index} ${f.problem}\n    ${f.request}\n    -> ${f.body ?? ''}`);
    console.log(`processes alive: ${JSON.stringify(alive)}`);
    console.log(`errors logged, or data errors only the database caught: ${logged.length}`);
    for (const line of logged.slice(0, 10)) console.log(`  ${line}`);
    if (report.findingCount > 0) console.log(`reproduce with: npm run fuzz -- --n ${requests} --seed ${seed}`);
    process.exitCode = report.fiveXx > 0 || report.findingCount > 0 || logged.length > 0 || Object.values(alive).includes(false) ? 1 : 0;
  } finally {
    await stack.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
