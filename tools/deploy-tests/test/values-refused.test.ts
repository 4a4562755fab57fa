// Values the schema's per-field rules let through but that would break the release: each must be
// refused by `helm template` (and so by `helm install`/`upgrade`), with a message naming the values
// (values.schema.json where it can say so, else dw.validateValues in templates/_helpers.tpl).
import { renderChart } from '../src/helm';

const CI_VALUES = 'k8s/deposit-withdraw/ci/test-values.yaml';
const render = (values: object) => renderChart(values, [CI_VALUES]);

describe('values the chart refuses at helm template time', () => {
  it('renders the example values (the checks below are not refusing everything)', () => {
    expect(render({}).length).toBeGreaterThan(10);
  });

  it.each([
    ['apiGateway', 3000],
    ['transactionsSvc', 3001],
    ['callbackSvc', 3002],
    ['ui', 3003],
  ])("a metrics.port equal to %s's own port %p (EADDRINUSE at start)", (key, port) => {
    expect(() => render({ metrics: { port } })).toThrow(new RegExp(`metrics\\.port ${port} is also ${key}\\.containerPort`));
  });

  it("a metrics.port equal to a component's moved containerPort", () => {
    expect(() => render({ metrics: { port: 8080 }, ui: { containerPort: 8080 } })).toThrow(/metrics\.port 8080 is also ui\.containerPort/);
    expect(render({ metrics: { port: 9100 } }).length).toBeGreaterThan(10);
  });

  it('an autoscaler whose minReplicas is above its maxReplicas, unless it is off', () => {
    expect(() => render({ callbackSvc: { autoscaling: { minReplicas: 7, maxReplicas: 6 } } })).toThrow(
      /callbackSvc\.autoscaling\.minReplicas \(7\) is above callbackSvc\.autoscaling\.maxReplicas \(6\)/,
    );
    expect(render({ callbackSvc: { autoscaling: { enabled: false, minReplicas: 7, maxReplicas: 6 } } }).length).toBeGreaterThan(10);
    expect(render({ callbackSvc: { autoscaling: { minReplicas: 6, maxReplicas: 6 } } }).length).toBeGreaterThan(10);
  });

  it('no credentials: the refusal names secrets.existingSecret beside the credentials, the two ways to give them', () => {
    let message = '';
    try {
      renderChart({});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("at '/secrets/existingSecret': minLength: got 0, want 1");
    expect(message).toContain("at '/secrets/databaseUrl': minLength: got 0, want 1");
    expect(renderChart({ secrets: { existingSecret: 'payments-creds' } }).length).toBeGreaterThan(10);
  });

  it('a redis.url with redis.enabled off, which would otherwise be ignored without a word', () => {
    expect(() => render({ redis: { url: 'redis://redis.data:6379' } })).toThrow(/at '\/redis\/enabled': value must be true/);
    const enabled = render({ redis: { enabled: true, url: 'redis://redis.data:6379' } });
    expect(JSON.stringify(enabled)).toContain('REDIS_URL');
  });

  it("a migration.activeDeadlineSeconds that Helm's default 5 min --timeout would cut short", () => {
    expect(() => render({ migration: { activeDeadlineSeconds: 300 } })).toThrow(/migration[./]activeDeadlineSeconds/);
    expect(() => render({ migration: { activeDeadlineSeconds: 900 } })).toThrow(/migration[./]activeDeadlineSeconds/);
    expect(render({ migration: { activeDeadlineSeconds: 299 } }).length).toBeGreaterThan(10);
  });

  it("a nodeOptions heap bound that does not fit in a component's memory limit, in either spelling", () => {
    expect(() => render({ nodeOptions: '--max-old-space-size=256 --max-semi-space-size=4' })).toThrow(
      /--max-old-space-size=256 \(MiB\) does not fit in callbackSvc\.resources\.limits\.memory \(256Mi\)/,
    );
    expect(() => render({ nodeOptions: '--max_old_space_size=1024', apiGateway: { resources: { limits: { memory: '1Gi' } } } })).toThrow(
      /does not fit in apiGateway\.resources\.limits\.memory \(1Gi\)/,
    );
    const big = { resources: { limits: { memory: '1.5Gi' } } };
    expect(render({ nodeOptions: '--max-old-space-size=1024', apiGateway: big, transactionsSvc: big, callbackSvc: big, ui: big }).length).toBeGreaterThan(10);
    // A component without a memory limit has nothing to compare with.
    const none = { resources: { limits: { memory: null } } };
    expect(render({ nodeOptions: '--max-old-space-size=1024', apiGateway: none, transactionsSvc: none, callbackSvc: none, ui: none }).length).toBeGreaterThan(10);
  });
});
