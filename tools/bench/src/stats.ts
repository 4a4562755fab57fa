/**
 * The bench's pure helpers: percentiles, the A/B round order, ratios and the printed table.
 * Kept free of I/O so test/stats.test.ts can check them.
 */

/** Nearest-rank percentile (p in 0..100) of unsorted numbers; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : Number.NaN,
  };
}

/**
 * The order of the sides in each round: A B, B A, A B, … so that neither side always runs first
 * (warm caches, a neighbour's load that grows or fades during the run).
 */
export function abOrder(rounds: number): Array<['A', 'B'] | ['B', 'A']> {
  return Array.from({ length: rounds }, (_, i) => (i % 2 === 0 ? ['A', 'B'] : ['B', 'A']));
}

/** Runs `a` and `b` alternately for `rounds` rounds; returns each side's results in round order. */
export async function alternate<T>(rounds: number, a: (round: number) => Promise<T>, b: (round: number) => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  const out = { a: [] as T[], b: [] as T[] };
  for (const [round, order] of abOrder(rounds).entries()) {
    for (const side of order) {
      if (side === 'A') out.a.push(await a(round));
      else out.b.push(await b(round));
    }
  }
  return out;
}

export function ratio(ours: number, baseline: number): number {
  return baseline > 0 && Number.isFinite(ours) ? ours / baseline : Number.NaN;
}

/** A number for the table: integers above 100, 3 significant digits below, '–' when unknown. */
export function fmt(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  if (Math.abs(n) >= 100) return String(Math.round(n));
  return String(Number(n.toPrecision(3)));
}

/** A Markdown table (readable in a terminal and pasteable into docs/benchmarks.md). */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (c ?? '').padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}
