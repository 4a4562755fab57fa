// docker-compose.yml as Docker Compose reads it (merge keys resolved): the services, what is
// published, health checks and start order, and environments the services' loaders accept.
import { loadCallbackConfig, loadGatewayConfig, loadTransactionsConfig, loadUiConfig, type Env } from '@dw/config';
import { isObject, readYaml, type Json, type JsonObject } from '../src/repo-files';

const compose = readYaml('docker-compose.yml');
const services = compose['services'] as Record<string, JsonObject>;
const APPS: Record<string, number> = { 'api-gateway': 3000, 'transactions-svc': 3001, 'callback-svc': 3002, ui: 3003 };

const service = (name: string): JsonObject => {
  const found = services[name];
  if (!found) throw new Error(`no service ${name} in docker-compose.yml`);
  return found;
};
/**
 * Compose's interpolation of `${NAME:?message}` (required) and `${NAME:-default}` from `shell`, as
 * `docker compose` does before anything starts; a required variable that is unset stops it.
 */
function interpolate(value: string, shell: Env): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_all, name: string, kind?: string, arg?: string) => {
    const set = shell[name];
    if (set !== undefined && set !== '') return set;
    if (kind === '?') throw new Error(`required variable ${name} is missing a value: ${arg}`);
    return kind === '-' ? (arg ?? '') : '';
  });
}
/** The operator's environment the tests start compose with: the one variable it requires. */
const SHELL: Env = { INTERNAL_AUTH_SECRETS: 'operator-generated-secret-0123456789abcdef' };
const envOf = (name: string, shell: Env = SHELL): Env =>
  Object.fromEntries(Object.entries(service(name)['environment'] as JsonObject).map(([k, v]) => [k, interpolate(String(v), shell)]));
const dependsOn = (name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries((service(name)['depends_on'] ?? {}) as Record<string, Json>).map(([dep, spec]) => [
      dep,
      isObject(spec) ? String(spec['condition']) : 'service_started',
    ]),
  );

describe('docker-compose.yml', () => {
  it('runs the infrastructure, a one-shot migration and the four services', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['api-gateway', 'callback-svc', 'jaeger', 'migrate', 'postgres', 'rabbitmq', 'redis', 'transactions-svc', 'ui'].sort(),
    );
    expect(service('postgres')['image']).toBe('postgres:15');
    expect(String(service('rabbitmq')['image'])).toMatch(/^rabbitmq:4\.\d+-management$/);
    expect(String(service('redis')['image'])).toMatch(/^redis:7/);
    expect(String(service('jaeger')['image'])).toMatch(/^jaegertracing\/all-in-one:/);
    expect(service('jaeger')['environment']).toMatchObject({ COLLECTOR_OTLP_ENABLED: 'true' });
  });

  it('publishes only the gateway and the Jaeger and RabbitMQ management UIs, each on 127.0.0.1 alone', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      ((s['ports'] ?? []) as Json[]).map((p) => `${name} ${String(p)}`),
    );
    expect(published.sort()).toEqual(['api-gateway 127.0.0.1:3000:3000', 'jaeger 127.0.0.1:16686:16686', 'rabbitmq 127.0.0.1:15672:15672']);
  });

  it('requires INTERNAL_AUTH_SECRETS from the environment (no secret written in the file), and refuses to start without it', () => {
    for (const app of ['api-gateway', 'transactions-svc', 'ui']) {
      expect(loadGatewayConfig(envOf(app)).internalAuthSecrets).toEqual([SHELL.INTERNAL_AUTH_SECRETS]);
      expect(() => envOf(app, {})).toThrow(/INTERNAL_AUTH_SECRETS.*openssl rand/);
    }
  });

  it('keeps callbacks to private addresses off unless the operator turns them on', () => {
    const load = { 'transactions-svc': loadTransactionsConfig, 'callback-svc': loadCallbackConfig };
    for (const [app, loadConfig] of Object.entries(load)) {
      expect(loadConfig(envOf(app)).allowPrivateHosts).toBe(false);
      expect(loadConfig(envOf(app, { ...SHELL, CALLBACK_ALLOW_PRIVATE_HOSTS: 'true' })).allowPrivateHosts).toBe(true);
    }
  });

  it('gives the gateway, transactions-svc and ui one internal secret, and the gateway Redis', () => {
    const secrets = ['api-gateway', 'transactions-svc', 'ui'].map((app) => loadGatewayConfig(envOf(app)).internalAuthSecrets);
    expect(secrets[1]).toEqual(secrets[0]);
    expect(secrets[2]).toEqual(secrets[0]);
    expect(loadGatewayConfig(envOf('api-gateway')).redisUrl).toBe('redis://redis:6379');
    expect(dependsOn('api-gateway')).toMatchObject({ redis: 'service_healthy' });
  });

  it('selects each app in the one image and checks its /readyz on its own port', () => {
    for (const [app, port] of Object.entries(APPS)) {
      expect(envOf(app)['APP']).toBe(app);
      const test = (service(app)['healthcheck'] as JsonObject)['test'] as string[];
      expect(test.join(' ')).toContain(`http://127.0.0.1:${port}/readyz`);
    }
    expect(service('postgres')['healthcheck']).toBeDefined();
    expect(service('rabbitmq')['healthcheck']).toBeDefined();
  });

  it("gives each service longer to stop than its own shutdown budget, so Docker never kills one mid-shutdown", () => {
    for (const app of Object.keys(APPS)) {
      const budgetMs = loadGatewayConfig({ ...envOf(app), INTERNAL_AUTH_SECRETS: 'x'.repeat(32) }).shutdownTimeoutMs;
      const grace = /^(\d+)s$/.exec(String(service(app)['stop_grace_period']));
      expect(grace && Number(grace[1]) * 1000).toBeGreaterThan(budgetMs);
    }
  });

  it('migrates once, after PostgreSQL is healthy, before the services that use the database', () => {
    expect(service('migrate')['command']).toEqual(['node', '--enable-source-maps', 'dist/cli/migrate.js', 'deploy']);
    expect(service('migrate')['restart']).toBe('no');
    expect(dependsOn('migrate')).toEqual({ postgres: 'service_healthy' });
    for (const app of ['transactions-svc', 'callback-svc']) {
      expect(dependsOn(app)).toMatchObject({ migrate: 'service_completed_successfully', rabbitmq: 'service_healthy' });
    }
    expect(dependsOn('ui')).toMatchObject({ 'transactions-svc': 'service_healthy' });
    // The gateway's readiness needs transactions-svc only; the ui may come up later.
    expect(dependsOn('api-gateway')).toMatchObject({ 'transactions-svc': 'service_healthy', ui: 'service_started' });
  });

  it("gives each service an environment its own config loader accepts, on its contract port", () => {
    expect(loadGatewayConfig(envOf('api-gateway')).port).toBe(APPS['api-gateway']);
    expect(loadTransactionsConfig(envOf('transactions-svc')).port).toBe(APPS['transactions-svc']);
    expect(loadCallbackConfig(envOf('callback-svc')).port).toBe(APPS['callback-svc']);
    expect(loadUiConfig(envOf('ui')).port).toBe(APPS['ui']);
    const gateway = loadGatewayConfig(envOf('api-gateway'));
    expect(gateway.transactionsUrl).toBe(`http://transactions-svc:${APPS['transactions-svc']}`);
    expect(gateway.uiUrl).toBe(`http://ui:${APPS['ui']}`);
  });

  it('points every service at the compose network, and traces at Jaeger over OTLP/HTTP', () => {
    for (const app of Object.keys(APPS)) {
      const env = envOf(app);
      expect(env['DATABASE_URL']).toMatch(/^postgresql:\/\/[^@]+@postgres:5432\//);
      expect(env['AMQP_URL']).toMatch(/@rabbitmq:5672$/);
      expect(env['OTEL_EXPORTER_OTLP_ENDPOINT']).toBe('http://jaeger:4318');
      expect(env['OTEL_SERVICE_NAME']).toBe(app);
    }
    expect(envOf('migrate')['DATABASE_URL']).toBe(envOf('transactions-svc')['DATABASE_URL']);
  });
});
