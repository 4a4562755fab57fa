import { abOrder, alternate, fmt, markdownTable, median, percentile, ratio, summarize } from '../src/stats';

describe('percentile', () => {
  it('takes the nearest rank of the sorted values, whatever their order', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 90)).toBe(9);
    expect(percentile(values, 99)).toBe(10);
    expect(percentile(values, 0)).toBe(1);
  });
  it('is NaN for no values', () => {
    expect(percentile([], 50)).toBeNaN();
  });
  it('summarize gives count, p50, p99 and max', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(summarize(values)).toEqual({ count: 200, p50: 100, p99: 198, max: 200 });
  });
  it('median averages the two middle values of an even list', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([3, 1, 2])).toBe(2);
  });
});

describe('A/B alternation', () => {
  it('swaps which side goes first every round', () => {
    expect(abOrder(4)).toEqual([['A', 'B'], ['B', 'A'], ['A', 'B'], ['B', 'A']]);
  });
  it('runs the sides in that order and keeps the results of each side in round order', async () => {
    const calls: string[] = [];
    const out = await alternate(
      3,
      async (r) => (calls.push(`A${r}`), `a${r}`),
      async (r) => (calls.push(`B${r}`), `b${r}`),
    );
    expect(calls).toEqual(['A0', 'B0', 'B1', 'A1', 'A2', 'B2']);
    expect(out).toEqual({ a: ['a0', 'a1', 'a2'], b: ['b0', 'b1', 'b2'] });
  });
});

describe('table formatting', () => {
  it('ratio is NaN without a baseline', () => {
    expect(ratio(5, 0)).toBeNaN();
    expect(ratio(1, 4)).toBe(0.25);
  });
  it('fmt rounds large numbers, keeps 3 significant digits of small ones, dashes unknowns', () => {
    expect(fmt(1234.6)).toBe('1235');
    expect(fmt(0.123456)).toBe('0.123');
    expect(fmt(12.345)).toBe('12.3');
    expect(fmt(Number.NaN)).toBe('–');
    expect(fmt(undefined)).toBe('–');
  });
  it('pads every column to its widest cell', () => {
    expect(markdownTable(['a', 'bb'], [['ccc', 'd']])).toBe('| a   | bb |\n| --- | -- |\n| ccc | d  |');
  });
});
