/** The ratio bars of docs/benchmarks.svg: one bar per figure that has a baseline or a target. */
import type { Row } from './context';
import { fmt } from './stats';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function ratioChart(rows: Row[], title: string): string {
  const bars = rows.filter((r) => r.chartRatio !== undefined && Number.isFinite(r.chartRatio));
  const labelW = 430;
  const plotW = 420;
  const rowH = 26;
  const top = 48;
  const maxRatio = Math.max(1.2, ...bars.map((b) => b.chartRatio!));
  const x = (v: number) => labelW + (Math.min(v, maxRatio) / maxRatio) * plotW;
  const height = top + bars.length * rowH + 40;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + plotW + 80}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<text x="10" y="38" fill="#555">ours ÷ baseline (throughput), target ÷ ours (latency, memory), history ÷ empty (flat cost); tick = the figure's target</text>`,
  ];
  bars.forEach((b, i) => {
    const y = top + i * rowH;
    const target = b.chartTarget ?? 1;
    const ok = b.chartRatio! >= target;
    parts.push(`<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(b.figure)}</text>`);
    parts.push(`<rect x="${labelW}" y="${y + 4}" width="${x(b.chartRatio!) - labelW}" height="${rowH - 8}" fill="${ok ? '#3a7d44' : '#c0392b'}"/>`);
    parts.push(`<line x1="${x(target)}" x2="${x(target)}" y1="${y + 1}" y2="${y + rowH - 1}" stroke="#000" stroke-width="2"/>`);
    parts.push(`<text x="${Math.max(x(b.chartRatio!), x(target)) + 4}" y="${y + 16}">${fmt(b.chartRatio)}</text>`);
  });
  const bottom = top + bars.length * rowH;
  for (const v of [0.5, 1]) {
    parts.push(`<line x1="${x(v)}" x2="${x(v)}" y1="${top}" y2="${bottom}" stroke="#999" stroke-dasharray="4 3"/>`);
    parts.push(`<text x="${x(v)}" y="${bottom + 14}" text-anchor="middle">${v}</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
