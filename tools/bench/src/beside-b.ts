/**
 * The isolation rows' common part: merchant B creates a deposit every 50 ms (the open-loop
 * generator, its own process) in rounds that alternate B alone (the baseline) and B beside another
 * load, each round's callbacks delivered to the receiver before the next starts; the row's latency
 * columns are B's p50/p99, the median of the rounds on each side.
 */
import type { Stack } from '../../e2e/test/support/stack';
import type { Ctx, Row } from './context';
import { openLoop, type LoadResult } from './processes';
import { alternate, fmt, median, ratio } from './stats';

export const CREATE_EVERY_MS = 50;

export interface BesideB<T> {
  alone: LoadResult[];
  beside: LoadResult[];
  /** What the other load reported, one per round beside B. */
  loads: T[];
  /** The row's latency columns, and the notes' part about B. */
  columns: Pick<Row, 'ours' | 'baseline' | 'ratio' | 'oursLatency' | 'baselineLatency'>;
  /** "B: …" for the row's note, with B's creates not 201 and rounds not drained, if any. */
  noteOnB: string;
}

/**
 * `rounds` rounds a side of `seconds` each; `beside(created)` runs the other load until B's creates
 * of the round (`created`) are answered. B's callbacks go to the receiver under `/ok/<path>`
 * (`merchantWithCallback`); 2 s of B alone first, outside the measured rounds, to warm up.
 */
export async function bAloneAndBeside<T>(
  ctx: Ctx,
  stack: Stack,
  b: { apiToken: string },
  opts: { path: string; label: string; what: string; baseline: string; rounds: number; seconds: number },
  beside: (created: Promise<LoadResult>) => Promise<T>,
): Promise<BesideB<T>> {
  let expected = 0;
  let undrained = 0;
  const creates = (secs: number) => openLoop(stack.gateway, { rate: 1000 / CREATE_EVERY_MS, seconds: secs, token: b.apiToken });
  // Outside the timed part: each round's callbacks delivered before the next round starts.
  const delivered = async (r: LoadResult) => {
    expected += r.ok;
    if (!(await ctx.receiver.waitForIds(opts.path, expected, 30_000))) undrained++;
    return r;
  };
  await delivered(await creates(2));
  const loads: T[] = [];
  const { a: alone, b: besides } = await alternate(
    opts.rounds,
    async (round) => (ctx.log(`${opts.label}: round ${round + 1}/${opts.rounds} B alone`), delivered(await creates(opts.seconds))),
    async (round) => {
      ctx.log(`${opts.label}: round ${round + 1}/${opts.rounds} B beside ${opts.what}`);
      const created = creates(opts.seconds);
      const [r, load] = await Promise.all([created, beside(created)]);
      loads.push(load);
      return delivered(r);
    },
  );
  const p = (rs: LoadResult[], key: 'p50' | 'p99') => median(rs.map((r) => r[key]));
  const [oursP50, oursP99, baseP50, baseP99] = [p(besides, 'p50'), p(besides, 'p99'), p(alone, 'p50'), p(alone, 'p99')];
  const notCreated = [...alone, ...besides].reduce((n, r) => n + r.other, 0);
  return {
    alone,
    beside: besides,
    loads,
    columns: {
      ours: `p99 ${fmt(oursP99)} ms`,
      baseline: `p99 ${fmt(baseP99)} ms (${opts.baseline})`,
      ratio: fmt(ratio(oursP99, baseP99)),
      oursLatency: `${fmt(oursP50)} / ${fmt(oursP99)}`,
      baselineLatency: `${fmt(baseP50)} / ${fmt(baseP99)}`,
    },
    noteOnB:
      `B: a create every ${CREATE_EVERY_MS} ms (open loop), ${opts.rounds}×${opts.seconds}s rounds a side alternated, median of the rounds; ratio = B's p99 beside ${opts.what} ÷ alone` +
      (notCreated ? `; ${notCreated} of B's creates not 201` : '') +
      (undrained ? `; ${undrained} rounds' callbacks not all delivered in 30 s` : ''),
  };
}
