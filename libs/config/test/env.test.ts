import { ConfigError, loadCallbackConfig, loadGatewayConfig, loadTransactionsConfig, parseEnv, int, url } from '../src';

describe('service configuration from the environment', () => {
  it('applies the documented defaults', () => {
    expect(loadGatewayConfig({})).toMatchObject({ port: 3000, rateLimitPerSecond: 100, transactionsUrl: 'http://127.0.0.1:3001' });
    expect(loadTransactionsConfig({})).toMatchObject({
      port: 3001,
      databaseUrl: 'postgresql://postgres@127.0.0.1:5432/deposit_withdraw',
      sandboxSettleMs: 0,
      allowPrivateHosts: false,
      adminToken: undefined,
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

  it('says when a required setting is missing', () => {
    expect(() => parseEnv({ u: url('UPSTREAM', { protocols: ['http'] }) }, {})).toThrow(/UPSTREAM is required/);
    expect(() => parseEnv({ n: int('N', { min: 1, max: 5 }) }, { N: '9' })).toThrow(/N must be an integer from 1 to 5 \(got "9"\)/);
  });
});
