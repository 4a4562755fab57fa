// Cross-checks of the chart's templates without a helm binary (none is installable here): every
// value a template reads exists, the ConfigMap and compose environment are what the services'
// own config loaders accept, and the commands point at files the build produces.
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
import { chartTemplates, chartValues, readText, readYaml, valueAt, mergeValues } from '../src/repo-files';

const templates = chartTemplates();
const values = mergeValues(chartValues(), readYaml('k8s/deposit-withdraw/ci/test-values.yaml'));
const COMPONENTS = ['apiGateway', 'transactionsSvc', 'callbackSvc', 'ui'];
const knownSettings = new Set(
  [gatewaySpec, transactionsSpec, callbackSpec, uiSpec].flatMap((spec) => Object.values(spec).map((s) => s.name)),
);

/** The ConfigMap's data as the chart renders it with these values (service URLs given by hand). */
function configMapEnv(): Env {
  const env: Env = {};
  for (const line of templates.get('configmap.yaml')!.split('\n')) {
    const literal = /^ {2}([A-Z0-9_]+): "([^"{]*)"$/.exec(line);
    const fromValues = /^ {2}([A-Z0-9_]+): \{\{ (\$c|\.Values)\.([\w.]+) /.exec(line);
    if (literal) env[literal[1]!] = literal[2]!;
    if (fromValues) {
      const path = fromValues[2] === '$c' ? `config.${fromValues[3]}` : fromValues[3]!;
      env[fromValues[1]!] = String(valueAt(values, path));
    }
  }
  env['TRANSACTIONS_URL'] = 'http://rel-deposit-withdraw-transactions-svc:3001';
  env['UI_URL'] = 'http://rel-deposit-withdraw-ui:3003';
  return env;
}

const secrets = (): Env => ({
  DATABASE_URL: String(valueAt(values, 'secrets.databaseUrl')),
  AMQP_URL: String(valueAt(values, 'secrets.amqpUrl')),
  ADMIN_TOKEN: String(valueAt(values, 'secrets.adminToken')),
  INTERNAL_AUTH_SECRETS: String(valueAt(values, 'secrets.internalAuthSecrets')),
});
const required = { INTERNAL_AUTH_SECRETS: 'x'.repeat(32) };

/**
 * Drops what a deployment must set differently from a developer machine: addresses, tokens, and
 * the metrics port (the chart serves /metrics on its own port so monitoring reaches nothing else).
 */
function withoutAddresses<T extends object>(config: T): Partial<T> {
  const out = { ...config } as Record<string, unknown>;
  for (const key of ['databaseUrl', 'amqpUrl', 'transactionsUrl', 'uiUrl', 'adminToken', 'internalAuthSecrets', 'metricsPort']) delete out[key];
  return out as Partial<T>;
}

describe('chart templates', () => {
  it('read only values that exist in values.yaml', () => {
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

  it('render an HPA for the gateway, transactions-svc and callback-svc, and none for the ui', () => {
    for (const file of ['api-gateway.yaml', 'transactions-svc.yaml', 'callback-svc.yaml']) {
      expect(templates.get(file)).toContain('include "dw.hpa"');
    }
    expect(templates.get('ui.yaml')).not.toContain('dw.hpa');
  });

  it('put only settings the services know into the ConfigMap', () => {
    const unknown = Object.keys(configMapEnv()).filter((name) => !knownSettings.has(name));
    expect(unknown).toEqual([]);
  });

  it("give each service a configuration its own loader accepts, with the services' defaults", () => {
    const env = { ...configMapEnv(), ...secrets() };
    expect(withoutAddresses(loadGatewayConfig(env))).toEqual(withoutAddresses(loadGatewayConfig(required)));
    expect(withoutAddresses(loadTransactionsConfig(env))).toEqual(withoutAddresses(loadTransactionsConfig(required)));
    expect(withoutAddresses(loadCallbackConfig(env))).toEqual(withoutAddresses(loadCallbackConfig({})));
    expect(withoutAddresses(loadUiConfig(env))).toEqual(withoutAddresses(loadUiConfig(required)));
    expect(loadGatewayConfig(env).metricsPort).toBe(valueAt(values, 'metrics.port'));
  });

  it('give INTERNAL_AUTH_SECRETS to the gateway, transactions-svc and ui only, and REDIS_URL to the gateway only when redis.enabled', () => {
    const component = templates.get('_component.tpl')!;
    expect(component).toMatch(/"apiGateway" \$gateway "transactionsSvc" \(list "DATABASE_URL" "AMQP_URL" "ADMIN_TOKEN" "INTERNAL_AUTH_SECRETS"\) "callbackSvc" \(list "DATABASE_URL" "AMQP_URL"\) "ui" \(list "INTERNAL_AUTH_SECRETS"\)/);
    expect(component).toMatch(/\$gateway := list "AMQP_URL" "INTERNAL_AUTH_SECRETS"/);
    expect(component).toMatch(/if \.root\.Values\.redis\.enabled \}\}\{\{- \$gateway = append \$gateway "REDIS_URL"/);
    expect(templates.get('secret.yaml')).toContain('INTERNAL_AUTH_SECRETS: {{ .Values.secrets.internalAuthSecrets | b64enc | quote }}');
    expect(templates.get('_helpers.tpl')).toContain('required "secrets.internalAuthSecrets is required');
    expect(valueAt(chartValues(), 'redis.enabled')).toBe(false);
    expect(templates.get('redis.yaml')).toMatch(/^\{\{- if and \.Values\.redis\.enabled \(not \.Values\.redis\.url\) \}\}$/m);
  });

  it('serve metrics on their own port, the only one monitoring may reach', () => {
    const component = templates.get('_component.tpl')!;
    expect(component).toMatch(/- name: metrics\s+containerPort: \{\{ \$root\.Values\.metrics\.port \}\}/);
    expect(component).toContain('prometheus.io/port: {{ $root.Values.metrics.port | quote }}');
    const policy = templates.get('networkpolicy.yaml')!;
    const monitoringRule = /\{\{- if \$np\.metrics\.enabled \}\}\s+- ports:\s+- port: (\w+)/.exec(policy);
    expect(monitoringRule?.[1]).toBe('metrics');
    expect(templates.get('configmap.yaml')).toContain('METRICS_PORT: {{ .Values.metrics.port | quote }}');
  });

  it("route only the public API, the viewer and the API documents through the Ingress, not the gateway's health and metrics", () => {
    const hosts = valueAt(chartValues(), 'ingress.hosts') as { paths: { path: string; pathType: string }[] }[];
    const routed = hosts.flatMap((h) => h.paths.map((p) => `${p.pathType} ${p.path}`));
    expect(routed).toEqual(['Prefix /api', 'Prefix /ui', 'Prefix /docs', 'Exact /openapi.json']);
    // Kubernetes Prefix matching is by whole path segments: /api matches /api/x, never /apix.
    const reaches = (path: string) =>
      hosts.some((h) =>
        h.paths.some((p) => {
          const prefix = p.path.replace(/\/$/, '');
          return p.pathType === 'Exact' ? p.path === path : path === prefix || path.startsWith(`${prefix}/`);
        }),
      );
    for (const internal of ['/metrics', '/healthz', '/readyz']) expect(reaches(internal)).toBe(false);
    for (const published of ['/api/createDeposit', '/ui', '/ui/assets/app.js', '/docs', '/openapi.json']) expect(reaches(published)).toBe(true);
  });

  it('let only the gateway and ui reach transactions-svc, and only the gateway reach ui', () => {
    expect(templates.get('networkpolicy.yaml')).toContain(
      '$callers := dict "apiGateway" (list) "transactionsSvc" (list "apiGateway" "ui") "callbackSvc" (list) "ui" (list "apiGateway")',
    );
  });

  it('set terminationGracePeriodSeconds above SHUTDOWN_TIMEOUT_MS plus the preStop sleep', () => {
    const helper = templates.get('_helpers.tpl')!;
    expect(helper).toMatch(/define "dw.terminationGracePeriodSeconds"[\s\S]*div \(add \(int \.Values\.config\.shutdownTimeoutMs\) 999\) 1000/);
    expect(helper).toMatch(/add \(int \.Values\.preStopSleepSeconds\) \$shutdownSeconds \(int \.Values\.terminationGraceExtraSeconds\)/);
    expect(Number(valueAt(values, 'terminationGraceExtraSeconds'))).toBeGreaterThan(0);
    expect(templates.get('_component.tpl')).toContain('terminationGracePeriodSeconds: {{ include "dw.terminationGracePeriodSeconds" $root }}');
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
    expect(bounds).toMatch(/^--max-old-space-size=\d+$/);
    expect(readText('Dockerfile')).toContain(`ENV NODE_OPTIONS="${bounds}"`);
    expect(valueAt(chartValues(), 'nodeOptions')).toBe(bounds);
    expect(templates.get('_component.tpl')).toMatch(/- name: NODE_OPTIONS\n\s+value: \{\{ \$root\.Values\.nodeOptions \| quote \}\}/);
    expect(readText('scripts/start.mjs')).toContain("env.NODE_OPTIONS ??= JSON.parse(readFileSync(path.join(root, 'libs/config/src/node-options.json')");
  });

  it('build one non-root image from node:20-bookworm-slim in stages', () => {
    const dockerfile = readText('Dockerfile');
    expect(dockerfile.match(/^FROM node:20-bookworm-slim/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toContain('npx nx run-many -t build');
    expect(dockerfile).toContain('npm run generate -w @dw/transactions-svc');
    expect(valueAt(values, 'podSecurityContext.runAsUser')).toBe(1000);
  });
});
