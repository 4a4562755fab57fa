// What docs/deploy.md and docs/operations.md state about the deployment, checked against the code
// and the rendered chart they describe, so a change to either shows up as a failing doc.
import { loadCallbackConfig, loadGatewayConfig, loadTransactionsConfig } from '@dw/config';
import { manifest, renderChart } from '../src/helm';
import { readText } from '../src/repo-files';

const CI_VALUES = 'k8s/deposit-withdraw/ci/test-values.yaml';

const deployMd = readText('docs/deploy.md');
/** The doc's text with its line breaks and indentation folded, so a sentence can be matched whole. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

describe("docs/deploy.md's PostgreSQL connection sizing", () => {
  const required = { INTERNAL_AUTH_SECRETS: 'x'.repeat(32) };
  const pool = loadTransactionsConfig(required).databasePoolSize;
  const exportsPool = loadTransactionsConfig(required).exportDatabasePoolSize;
  const relayPool = Number(/createPool\(opts\.databaseUrl, (\d+),/.exec(readText('apps/transactions-svc/src/outbox/outbox-relay.ts'))?.[1]);
  const callbackPool = loadCallbackConfig({}).databasePoolSize;

  it("counts transactions-svc's export and outbox relay pools beside config.databasePoolSize", () => {
    expect(readText('apps/transactions-svc/src/main.ts')).toMatch(/createPool\(config\.databaseUrl, config\.exportDatabasePoolSize/);
    expect(relayPool).toBeGreaterThan(0);
    const text = flat(deployMd);
    expect(text).toContain(`opens up to \`config.databasePoolSize\` (${pool}) for requests and its background jobs, plus ${exportsPool} for exports`);
    expect(text).toContain(`plus ${relayPool} for the outbox relay: ${pool + exportsPool + relayPool} by default`);
    expect(text).toContain(`(transactions-svc pods) × (databasePoolSize + ${exportsPool + relayPool}) + (callback-svc pods) × databasePoolSize`);
    expect(text).toContain(`8 × ${pool + exportsPool + relayPool} + 8 × ${callbackPool} = ${8 * (pool + exportsPool + relayPool) + 8 * callbackPool}`);
    expect(text).not.toMatch(/pod opens up to `config\.databasePoolSize` PostgreSQL connections/);
  });
});

describe("docs/operations.md's upgrades: rollouts and PodDisruptionBudgets", () => {
  const manifests = renderChart({}, [CI_VALUES]);
  const text = flat(readText('docs/operations.md'));

  it("says the rollout follows Kubernetes' default strategy, which the chart's Deployments leave unset", () => {
    const deployments = manifests.filter((m) => m.kind === 'Deployment' && m.metadata.name.startsWith('rel-deposit-withdraw-'));
    expect(deployments.length).toBeGreaterThanOrEqual(4);
    for (const d of deployments) expect(d.spec.strategy).toBeUndefined();
    expect(text).toContain("The chart sets none, so Kubernetes' default applies: `maxSurge` 25% rounded up and `maxUnavailable` 25% rounded down");
  });

  it('says PodDisruptionBudgets govern evictions, not rollouts, and let a single replica go', () => {
    expect(text).not.toMatch(/PodDisruptionBudgets keep one of each up/);
    expect(text).toContain('PodDisruptionBudgets play no part in a rollout: they only limit voluntary evictions');
    for (const service of ['api-gateway', 'transactions-svc', 'callback-svc', 'ui']) {
      expect(manifest(manifests, 'PodDisruptionBudget', `rel-deposit-withdraw-${service}`).spec.maxUnavailable).toBe(1);
    }
    expect(manifest(manifests, 'Deployment', 'rel-deposit-withdraw-ui').spec.replicas).toBe(1);
    expect(text).toContain('a component with a single replica (the ui by default) can be evicted with none left');
  });
});

describe("docs/operations.md on where /metrics is served", () => {
  it("says only on metrics.port, never on the service's own port, as the chart configures the services", () => {
    const configMap = manifest(renderChart({}, [CI_VALUES]), 'ConfigMap', 'rel-deposit-withdraw').data!;
    expect(Number(configMap['METRICS_PORT'])).toBeGreaterThan(0);
    // With METRICS_PORT set, createService leaves /metrics off the service's own port.
    expect(readText('libs/http-kit/src/create-service.ts')).toContain('{ metrics: !opts.metricsPort }');
    const text = flat(readText('docs/operations.md'));
    expect(text).toContain("every service serves `GET /metrics` only on the metrics port (`metrics.port`, 9464, set as `METRICS_PORT`), never on the service's own port");
    expect(text).not.toContain('serves `GET /metrics` on its own port');
  });
});

describe("docs/deploy.md's docker run example", () => {
  it("sets every variable the gateway requires (its config loader accepts the example's variables)", () => {
    const line = deployMd.split('\n').find((l) => l.startsWith('docker run -e APP=api-gateway'));
    expect(line).toBeDefined();
    const names = [...line!.matchAll(/-e ([A-Z_]+)=/g)].map((m) => m[1]!);
    expect(names).toContain('INTERNAL_AUTH_SECRETS');
    // Stand-ins for the example's values ("...", a generated secret).
    const stand = (name: string) => (name === 'AMQP_URL' ? 'amqp://rabbitmq:5672' : 'x'.repeat(44));
    const env = Object.fromEntries(names.filter((n) => n !== 'APP').map((n) => [n, stand(n)]));
    expect(() => loadGatewayConfig(env)).not.toThrow();
    expect(deployMd).toContain('INTERNAL_AUTH_SECRETS="$(openssl rand -base64 32)"');
  });
});
