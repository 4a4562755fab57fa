// The SRE pack names only metrics that exist: every metric a dashboard panel or an alert rule of
// the chart (k8s/deposit-withdraw/monitoring) queries must be exported by one of the four running
// services' GET /metrics, apart from the few that other processes export (below). A renamed
// metric, or a panel written for a metric nobody exports, fails here instead of showing an empty
// graph or an alert that can never fire.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startStack, type ServiceName, type Stack } from './support/stack';

const MONITORING = path.join(ROOT, 'k8s/deposit-withdraw/monitoring');

/** Exported by processes other than ours: Prometheus itself, and RabbitMQ's rabbitmq_prometheus plugin. */
const OTHER_PROCESSES = [/^up$/, /^rabbitmq_/];

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/** Metric names in a PromQL expression: identifiers that are not functions, keywords or labels. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\{\{[\s\S]*?\}\}/g, ' 0 ') // the chart's template values
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  // Whole identifiers only; one followed by `(` is a function.
  const names = [...bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?/g)].filter((m) => !m[2]).map((m) => m[1]!);
  return names.filter((n) => !PROMQL_WORDS.has(n.toLowerCase()));
}

/** Every expression of the alert rules and the dashboards, each with where it comes from. */
function queriedExpressions(): { where: string; expr: string }[] {
  const found: { where: string; expr: string }[] = [];
  for (const line of readFileSync(path.join(MONITORING, 'alerts.yaml'), 'utf8').split('\n')) {
    const match = /^\s*expr:\s*(.*)$/.exec(line);
    if (match) found.push({ where: 'alerts.yaml', expr: match[1]! });
  }
  for (const file of readdirSync(path.join(MONITORING, 'dashboards'))) {
    const dashboard = JSON.parse(readFileSync(path.join(MONITORING, 'dashboards', file), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    for (const panel of dashboard.panels) for (const t of panel.targets) found.push({ where: `${file}: ${panel.title}`, expr: t.expr });
  }
  return found;
}

/** Sample names of one /metrics page, from its TYPE lines (a labelled counter never used has no sample yet). */
function exportedNames(page: string): string[] {
  const names: string[] = [];
  for (const match of page.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match;
    names.push(name!);
    if (type === 'histogram') names.push(`${name}_bucket`, `${name}_sum`, `${name}_count`);
    if (type === 'summary') names.push(`${name}_sum`, `${name}_count`);
  }
  return names;
}

let stack: Stack;
const exported = new Set<string>();

beforeAll(async () => {
  stack = await startStack('metric-names');
  for (const name of Object.keys(stack.ports) as ServiceName[]) {
    const res = await fetch(`http://127.0.0.1:${stack.ports[name]}/metrics`);
    expect(res.status).toBe(200);
    for (const n of exportedNames(await res.text())) exported.add(n);
  }
});
afterAll(() => stack?.close());

describe('the dashboards and alert rules of the chart', () => {
  it('read some metrics of each kind (the extraction works)', () => {
    const names = new Set(queriedExpressions().flatMap((q) => metricNames(q.expr)));
    for (const n of ['http_server_request_duration_seconds_count', 'callback_attempts_total', 'outbox_lag_seconds', 'nodejs_heap_size_used_bytes', 'up']) {
      expect([...names]).toContain(n);
    }
    expect(metricNames('sum by (namespace, le) (rate(a_total{x="y"}[5m])) / on (pod) group_left b > {{ .Values.x }}')).toEqual(['a_total', 'b']);
  });

  it('name only metrics that a running service exports (or Prometheus, or RabbitMQ)', () => {
    const missing = queriedExpressions().flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((n) => !exported.has(n) && !OTHER_PROCESSES.some((re) => re.test(n)))
        .map((n) => `${where}: ${n}`),
    );
    expect([...new Set(missing)]).toEqual([]);
  });

});
