import { ConfigError, loadCallbackConfig, loadGatewayConfig, loadTransactionsConfig, loadUiConfig, parseEnv, int, url } from '../src';

const SECRET = 'x'.repeat(32);
const internal = { INTERNAL_AUTH_SECRETS: SECRET };

describe('service configuration from the environment', () => {
  it('applies the documented defaults', () => {
    expect(loadGatewayConfig(internal)).toMatchObject({
      port: 3000,
      rateLimitPerSecond: 100,
      transactionsUrl: 'http://127.0.0.1:3001',
      redisUrl: undefined,
      rateLimitRedisDown: 'open',
      badTokenLimitPerMinute: 60,
      publicLimitPerMinute: 600,
      connectionsPerAddress: 256,
      maxConnections: 10_000,
      merchantViewBytesPerSecond: 8 * 1024 * 1024,
      trustProxyHops: 0,
    });
    expect(loadTransactionsConfig(internal)).toMatchObject({
      port: 3001,
      databaseUrl: 'postgresql://postgres@127.0.0.1:5432/deposit_withdraw',
      sandboxSettleMs: 0,
      allowPrivateHosts: false,
      adminToken: undefined,
      eventRetentionDays: 90,
    });
    expect(loadCallbackConfig({})).toMatchObject({
      port: 3002,
      callbackTimeoutMs: 15000,
      retryDelaysMs: [5000, 10000, 20000, 40000, 80000],
      amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
    });
  });

  it('reads values that are set', () => {
    const c = loadCallbackConfig({ CALLBACK_RETRY_DELAYS_MS: '100, 200', CALLBACK_ALLOW_PRIVATE_HOSTS: 'true', CALLBACK_PORT: '4000' });
    expect(c).toMatchObject({ retryDelaysMs: [100, 200], allowPrivateHosts: true, port: 4000 });
  });

  it('reads EVENT_RETENTION_DAYS, where 0 keeps events forever, and refuses a negative one', () => {
    expect(loadTransactionsConfig({ ...internal, EVENT_RETENTION_DAYS: '0' }).eventRetentionDays).toBe(0);
    expect(loadTransactionsConfig({ ...internal, EVENT_RETENTION_DAYS: '30' }).eventRetentionDays).toBe(30);
    expect(() => loadTransactionsConfig({ ...internal, EVENT_RETENTION_DAYS: '-1' })).toThrow(/EVENT_RETENTION_DAYS must be an integer from 0/);
  });

  it('stops with a message naming every wrong setting at once', () => {
    let error: unknown;
    try {
      loadCallbackConfig({ CALLBACK_PORT: 'abc', CALLBACK_RETRY_DELAYS_MS: '5,x', CALLBACK_ALLOW_PRIVATE_HOSTS: 'yes', DATABASE_URL: 'mysql://x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['CALLBACK_PORT', 'CALLBACK_RETRY_DELAYS_MS', 'CALLBACK_ALLOW_PRIVATE_HOSTS', 'DATABASE_URL']) {
      expect(message).toContain(name);
    }
  });

  it('counts an empty value as unset and refuses what is not exactly an integer or a URL', () => {
    expect(loadCallbackConfig({ CALLBACK_PREFETCH: '  ', CALLBACK_PORT: ' 4001 ' })).toMatchObject({ prefetch: 1000, port: 4001 });
    for (const wrong of ['1.5', '12abc', '-3', '70000']) expect(() => loadCallbackConfig({ CALLBACK_PORT: wrong })).toThrow(/CALLBACK_PORT must be an integer from 0 to 65535/);
    expect(() => loadCallbackConfig({ CALLBACK_RETRY_DELAYS_MS: '5,0' })).toThrow(/CALLBACK_RETRY_DELAYS_MS must be a comma-separated list of integers from 1/);
    expect(() => loadCallbackConfig({ AMQP_URL: 'amqp//nohost' })).toThrow(/AMQP_URL must be a URL \(amqp, amqps\) \(got "amqp\/\/nohost"\)/);
    expect(loadCallbackConfig({ AMQP_URL: 'amqps://u:p@mq.example:5671/' }).amqpUrl).toBe('amqps://u:p@mq.example:5671');
  });

  it('says when a required setting is missing', () => {
    expect(() => parseEnv({ u: url('UPSTREAM', { protocols: ['http'] }) }, {})).toThrow(/UPSTREAM is required/);
    expect(() => parseEnv({ n: int('N', { min: 1, max: 5 }) }, { N: '9' })).toThrow(/N must be an integer from 1 to 5 \(got "9"\)/);
  });

  describe('INTERNAL_AUTH_SECRETS (the proof that a request came through the gateway)', () => {
    it.each([
      ['api-gateway', loadGatewayConfig],
      ['transactions-svc', loadTransactionsConfig],
      ['ui', loadUiConfig],
    ] as const)('%s refuses to start without it, naming it', (_name, load) => {
      expect(() => load({})).toThrow(/INTERNAL_AUTH_SECRETS is required/);
    });

    it('reads a comma-separated list (the first signs) and refuses a short secret without echoing it', () => {
      expect(loadTransactionsConfig({ INTERNAL_AUTH_SECRETS: `${SECRET}, ${'y'.repeat(40)}` }).internalAuthSecrets).toEqual([
        SECRET,
        'y'.repeat(40),
      ]);
      let message = '';
      try {
        loadUiConfig({ INTERNAL_AUTH_SECRETS: `${SECRET},short-secret-value` });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain('INTERNAL_AUTH_SECRETS must be');
      expect(message).not.toContain('short-secret-value');
    });
  });

  it('reads the shared rate-limit store settings of the gateway', () => {
    const c = loadGatewayConfig({ ...internal, REDIS_URL: 'redis://127.0.0.1:6379/', RATE_LIMIT_REDIS_DOWN: 'closed' });
    expect(c).toMatchObject({ redisUrl: 'redis://127.0.0.1:6379', rateLimitRedisDown: 'closed' });
    expect(() => loadGatewayConfig({ ...internal, REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
    expect(() => loadGatewayConfig({ ...internal, RATE_LIMIT_REDIS_DOWN: 'maybe' })).toThrow(/RATE_LIMIT_REDIS_DOWN/);
  });
});
