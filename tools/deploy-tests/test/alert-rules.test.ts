// The chart's PrometheusRule, checked and unit-tested by Prometheus' own promtool (Debian's
// prometheus package; .ci/run installs it): rendered with ci/test-values.yaml, its groups are
// written to a rule file beside promtool/alerts.test.yaml, which holds a firing and a quiet case for
// every alert. Each alert's runbook_url must land on a heading of docs/operations.md.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { manifest, renderChart } from '../src/helm';
import { readText, REPO_ROOT } from '../src/repo-files';

const CI_VALUES = 'k8s/deposit-withdraw/ci/test-values.yaml';
const TESTS = 'tools/deploy-tests/promtool/alerts.test.yaml';

type Rule = { alert?: string; annotations?: Record<string, string> };
const rule = manifest(renderChart({}, [CI_VALUES]), 'PrometheusRule', 'rel-deposit-withdraw');
const groups = rule.spec.groups as { name: string; rules: Rule[] }[];
const alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'dw-promtool-'));
  writeFileSync(path.join(dir, 'rules.yaml'), YAML.stringify({ groups }));
  copyFileSync(path.join(REPO_ROOT, TESTS), path.join(dir, 'alerts.test.yaml'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function promtool(args: string[]) {
  const run = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
  if (run.error) throw new Error(`promtool not found (apt-get install prometheus): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the PrometheusRule', () => {
  it('passes promtool check rules', () => {
    const run = promtool(['check', 'rules', 'rules.yaml']);
    expect(run.output).toContain(`SUCCESS: ${groups.flatMap((g) => g.rules).length} rules found`);
    expect(run.status).toBe(0);
  });

  it('passes its promtool unit tests', () => {
    const run = promtool(['test', 'rules', 'alerts.test.yaml']);
    expect(run.output).not.toContain('FAILED');
    expect(run.status).toBe(0);
  });

  it('has a unit test for every alert', () => {
    const tested = new Set(
      (YAML.parse(readText(TESTS)) as { tests: { alert_rule_test: { alertname: string }[] }[] }).tests.flatMap((t) =>
        t.alert_rule_test.map((a) => a.alertname),
      ),
    );
    expect(alerts.map((a) => a.alert).filter((name) => !tested.has(name!))).toEqual([]);
  });

  it("points every alert's runbook_url at its own section of docs/operations.md", () => {
    const anchors = new Set(
      readText('docs/operations.md')
        .split('\n')
        .filter((line) => line.startsWith('#'))
        .map((line) => line.replace(/^#+\s*/, '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')),
    );
    const broken = alerts.filter((a) => {
      const url = a.annotations?.['runbook_url'] ?? '';
      return !url.startsWith('docs/operations.md#') || !anchors.has(url.split('#')[1]!) || url.split('#')[1] !== a.alert!.toLowerCase();
    });
    expect(broken.map((a) => `${a.alert}: ${a.annotations?.['runbook_url']}`)).toEqual([]);
  });
});

describe("DWMemoryNearLimit, against each component's resources.limits.memory", () => {
  const COMPONENTS = ['apiGateway', 'transactionsSvc', 'callbackSvc', 'ui'] as const;
  const rulesWith = (values: object) => manifest(renderChart(values, [CI_VALUES]), 'PrometheusRule', 'rel-deposit-withdraw').spec.groups as typeof groups;
  const memoryExpr = (g: typeof groups) => g.flatMap((x) => x.rules).find((r) => r.alert === 'DWMemoryNearLimit') as (Rule & { expr: string }) | undefined;
  const checkRules = (g: typeof groups) => {
    writeFileSync(path.join(dir, 'variant.yaml'), YAML.stringify({ groups: g }));
    return promtool(['check', 'rules', 'variant.yaml']);
  };
  const limits = (memory: unknown) => Object.fromEntries(COMPONENTS.map((key) => [key, { resources: { limits: { memory } } }]));

  it.each([
    ['1.5Gi', 1610612736],
    ['.5Gi', 536870912],
    ['384Mi', 402653184],
    ['262144.5Ki', 268435968],
    ['1Ti', 1099511627776],
    ['512M', 512000000],
    ['1.5G', 1500000000],
    ['300000k', 300000000],
    ['268435456', 268435456],
    [268435456, 268435456],
  ] as const)('divides by the bytes of %p (%p)', (quantity, bytes) => {
    const g = rulesWith({ apiGateway: { resources: { limits: { memory: quantity } } } });
    expect(memoryExpr(g)!.expr).toContain(`process_resident_memory_bytes{namespace="payments", job="rel-deposit-withdraw-api-gateway"} / ${bytes} > 0.9`);
    expect(checkRules(g).status).toBe(0);
  });

  it('refuses a memory limit it cannot read, naming the value, instead of dividing by a wrong figure or 0', () => {
    for (const bad of ['lots', '1e9', '100m', 'Gi', '1.5 Gi']) {
      expect(() => renderChart({ ui: { resources: { limits: { memory: bad } } } }, [CI_VALUES])).toThrow(/ui[./]resources[./]limits[./]memory/);
    }
    expect(() => renderChart({ ui: { resources: { limits: { memory: '0' } } } }, [CI_VALUES])).toThrow(/ui\.resources\.limits\.memory: "0" is no memory at all/);
  });

  it('leaves the rule out when no component has a memory limit, and the rules still pass promtool', () => {
    const g = rulesWith(limits(null));
    expect(memoryExpr(g)).toBeUndefined();
    const run = checkRules(g);
    expect(run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('has one term per component with a limit', () => {
    const expr = memoryExpr(rulesWith({ ...limits(null), callbackSvc: { resources: { limits: { memory: '256Mi' } } } }))!.expr;
    expect(expr).toBe('process_resident_memory_bytes{namespace="payments", job="rel-deposit-withdraw-callback-svc"} / 268435456 > 0.9');
  });
});

describe('DWTargetDown and DWTargetMissing', () => {
  const alertsWith = (values: object) =>
    (manifest(renderChart(values, [CI_VALUES]), 'PrometheusRule', 'rel-deposit-withdraw').spec.groups as typeof groups).flatMap((g) => g.rules);

  it('DWTargetDown speaks of a failed scrape, not of readiness', () => {
    const down = alerts.find((a) => a.alert === 'DWTargetDown')!;
    expect(down.annotations!['summary']).toContain('the scrape of its metrics port fails');
    expect(`${down.annotations!['summary']} ${down.annotations!['description']}`).not.toMatch(/down or not ready/);
  });

  it("DWTargetMissing watches each component's job in the release namespace, only with the chart's ServiceMonitors", () => {
    const missing = alerts.find((a) => a.alert === 'DWTargetMissing') as Rule & { expr: string };
    for (const service of ['api-gateway', 'transactions-svc', 'callback-svc', 'ui']) {
      expect(missing.expr).toContain(`absent(up{namespace="payments", job="rel-deposit-withdraw-${service}"})`);
    }
    expect(alertsWith({ monitoring: { serviceMonitors: { enabled: false } } }).map((a) => a.alert)).not.toContain('DWTargetMissing');
  });

  it('leaves out a component scaled to zero', () => {
    const missing = alertsWith({ ui: { replicaCount: 0 } }).find((a) => a.alert === 'DWTargetMissing') as Rule & { expr: string };
    expect(missing.expr).not.toContain('rel-deposit-withdraw-ui"');
    expect(missing.expr).toContain('rel-deposit-withdraw-api-gateway"');
  });
});

describe('two releases side by side (one namespace, one Prometheus, one Grafana)', () => {
  type Dashboard = { uid: string; title: string; templating: { list: { name: string; current?: { value: string } }[] }; panels: Panel[] };
  type Panel = { targets?: { expr: string }[]; panels?: Panel[] };
  const JOBS = '(api-gateway|transactions-svc|callback-svc|ui)';
  const render = (release: string, values: object = {}) => renderChart(values, [CI_VALUES], release);
  const dashboards = (release: string) =>
    render(release)
      .filter((m) => m.kind === 'ConfigMap' && m.metadata.name.includes('-dashboard-'))
      .flatMap((m) => Object.entries(m.data!).map(([key, text]) => ({ key, dashboard: JSON.parse(text) as Dashboard })));
  const exprs = (panels: Panel[]): string[] => panels.flatMap((p) => [...(p.targets ?? []).map((t) => t.expr), ...exprs(p.panels ?? [])]);

  it("select each alert's service metrics by the release's job and namespace, and its queues by config.amqpPrefix", () => {
    const rules = (manifest(render('other', { config: { amqpPrefix: 'prod.' } }), 'PrometheusRule', 'other-deposit-withdraw').spec.groups as typeof groups).flatMap((g) => g.rules) as (Rule & { expr: string })[];
    expect(rules.length).toBe(alerts.length);
    for (const rule of rules) {
      if (rule.expr.includes('rabbitmq_')) {
        expect(rule.expr).toMatch(/queue=~"prod\\\\\.callbacks\\\\\./);
        expect(rule.expr).not.toContain('.*callbacks');
        continue;
      }
      // Every selector of a service metric names this release's namespace and job(s).
      const selectors = [...rule.expr.matchAll(/[a-z_]+\{[^}]*\}/g)].map((m) => m[0]);
      expect(selectors.length).toBeGreaterThan(0);
      for (const selector of selectors) {
        expect(selector).toContain('namespace="payments"');
        expect(selector).toMatch(/job=~?"other-deposit-withdraw-/);
      }
    }
  });

  it('give every dashboard a uid, title and sidecar file of its own, opening on the release, and scope every service query by it', () => {
    const rel = dashboards('rel');
    const other = dashboards('other');
    expect(rel).toHaveLength(5);
    for (const list of [rel, other]) {
      for (const { dashboard } of list) {
        expect(dashboard.uid.length).toBeLessThanOrEqual(40);
        const release = dashboard.templating.list.find((v) => v.name === 'release');
        expect(release?.current?.value).toMatch(/^(rel|other)-deposit-withdraw$/);
        for (const expr of exprs(dashboard.panels)) {
          if (expr.includes('rabbitmq_')) continue;
          expect(expr).toContain(`namespace="$namespace",job=~"$release-${JOBS}"`);
        }
      }
    }
    const all = [...rel, ...other];
    for (const field of [(d: (typeof all)[number]) => d.dashboard.uid, (d: (typeof all)[number]) => d.dashboard.title, (d: (typeof all)[number]) => d.key]) {
      expect(new Set(all.map(field)).size).toBe(all.length);
    }
  });
});
