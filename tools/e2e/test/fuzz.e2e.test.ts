/**
 * docs/api.md#errors: no input, however malformed, yields a 5xx or kills a process; every 4xx is
 * application/problem+json. A seeded fuzz (tools/e2e/fuzz) of bodies, query strings, headers and
 * callback URLs on all merchant endpoints, through the gateway in front of the real processes.
 * FUZZ_SEED and FUZZ_REQUESTS override the defaults; `npm run fuzz -- --n 100000` is the long form.
 */
import { prepareFuzz, processesAlive, runFuzz, suspiciousLogLines, type FuzzReport } from '../fuzz/run-fuzz';
import { startStack, type Stack } from './support/stack';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);

let stack: Stack;
let report: FuzzReport;
beforeAll(async () => {
  stack = await startStack('fuzz', { RATE_LIMIT_PER_SECOND: '1000000' });
  report = await runFuzz(stack, await prepareFuzz(stack, SEED), { requests: REQUESTS });
  console.log(`fuzz seed ${SEED}: ${report.requests} requests in ${report.seconds.toFixed(1)} s, statuses ${JSON.stringify(report.byStatus)}`);
}, 900_000);
afterAll(async () => stack?.close());

const explain = () =>
  `seed ${SEED} (rerun: FUZZ_SEED=${SEED} npx jest -c tools/e2e/jest.config.js fuzz)\n` +
  report.findings.map((f) => `#${f.index} ${f.problem}\n  ${f.request}\n  -> ${f.body ?? ''}`).join('\n');

describe(`fuzz of the merchant API (${REQUESTS} requests)`, () => {
  it('sent every request and got an answer to each', () => {
    const answered = Object.entries(report.byStatus).reduce((n, [status, count]) => n + (status === 'error' ? 0 : count), 0);
    expect({ answered, unanswered: report.byStatus.error ?? 0 }).toEqual({ answered: REQUESTS, unanswered: 0 });
  });

  it('never answers 5xx', () => {
    if (report.fiveXx > 0) throw new Error(`${report.fiveXx} answers were 5xx; ${explain()}`);
  });

  it('answers every 4xx with a problem+json naming the request id (and, for validation_failed, the fields and what each accepts)', () => {
    if (report.findingCount > 0) throw new Error(`${report.findingCount} answers broke the contract; ${explain()}`);
  });

  it('exercised validation, not only authentication: most answers are 200, 201, 202 or 400', () => {
    const reached = (report.byStatus[200] ?? 0) + (report.byStatus[201] ?? 0) + (report.byStatus[202] ?? 0) + (report.byStatus[400] ?? 0);
    expect(reached).toBeGreaterThan(REQUESTS * 0.7);
  });

  it('refuses bad input in the schemas: no error logged, no data error left for the database to catch', () => {
    expect(suspiciousLogLines(stack)).toEqual([]);
  });

  it('leaves all four processes alive', async () => {
    expect(await processesAlive(stack)).toEqual({ 'api-gateway': true, 'transactions-svc': true, 'callback-svc': true, ui: true });
  });
});
