import { ratioChart } from '../src/chart';

describe('ratio chart', () => {
  it('draws one bar per figure with a ratio, labelled, and escapes the labels', () => {
    const svg = ratioChart(
      [
        { figure: 'Create throughput (empty db)', ours: '', chartRatio: 0.25 },
        { figure: 'Latency <200/s>', ours: '', chartRatio: 1.5 },
        { figure: 'no ratio', ours: '' },
      ],
      'title',
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<rect x=/g)).toHaveLength(2);
    expect(svg).toContain('Latency &lt;200/s&gt;');
    expect(svg).not.toContain('no ratio');
    expect(svg).toContain('>0.25<');
  });
});
