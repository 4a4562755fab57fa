/**
 * Every setting of every service, in one place: names, defaults and ranges. The docs' configuration
 * table mirrors this file.
 */
import { bool, int, intList, oneOf, optionalStr, optionalUrl, parseEnv, port, secretList, str, url, type ConfigOf, type Env } from './env';

// One machine's defaults, in JSON so that `npm start` (scripts/start.mjs, plain Node) reads the same.
import localDefaults from './local-defaults.json';

export const DEFAULT_DATABASE_URL = localDefaults.DATABASE_URL;
export const DEFAULT_AMQP_URL = localDefaults.AMQP_URL;
const LOCAL_TRANSACTIONS_URL = `http://127.0.0.1:${localDefaults.TRANSACTIONS_PORT}`;
const LOCAL_UI_URL = `http://127.0.0.1:${localDefaults.UI_PORT}`;

const common = {
  host: str('HOST', { default: '0.0.0.0' }),
  logLevel: str('LOG_LEVEL', { default: 'info' }),
  /** Prepended to every exchange and queue name, so environments (and test files) share a broker safely. */
  amqpPrefix: str('AMQP_PREFIX', { default: '' }),
  shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', { default: 10_000, min: 100 }),
  /** A second port serving only GET /metrics (0: none, /metrics on the main port; set: there only). */
  metricsPort: port('METRICS_PORT', 0),
  /**
   * A connection with no byte moving either way for this long is closed: a client that stopped
   * reading a response (or an upstream that stopped sending) holds nothing for longer.
   */
  clientStallTimeoutMs: int('CLIENT_STALL_TIMEOUT_MS', { default: 30_000, min: 1_000, max: 600_000 }),
};

const database = {
  databaseUrl: url('DATABASE_URL', { default: DEFAULT_DATABASE_URL, protocols: ['postgres', 'postgresql'] }),
  databasePoolSize: int('DATABASE_POOL_SIZE', { default: 10, min: 1, max: 200 }),
};

const amqp = { amqpUrl: url('AMQP_URL', { default: DEFAULT_AMQP_URL, protocols: ['amqp', 'amqps'] }) };

const allowPrivateHosts = bool('CALLBACK_ALLOW_PRIVATE_HOSTS', false);

/**
 * The shared secret(s) with which the gateway (and the ui) prove to the internal services that a
 * request came through the gateway. Required: without it those services would trust anyone who
 * reaches their port. The first signs, every one verifies (rotation without downtime).
 */
const internalAuthSecrets = secretList('INTERNAL_AUTH_SECRETS', {
  minLength: 32,
  hint: 'e.g. `openssl rand -base64 32`; the same value in api-gateway, transactions-svc and ui',
});

export const gatewaySpec = {
  ...common,
  ...amqp,
  port: port('GATEWAY_PORT', localDefaults.GATEWAY_PORT),
  transactionsUrl: url('TRANSACTIONS_URL', { default: LOCAL_TRANSACTIONS_URL, protocols: ['http', 'https'] }),
  uiUrl: url('UI_URL', { default: LOCAL_UI_URL, protocols: ['http', 'https'] }),
  rateLimitPerSecond: int('RATE_LIMIT_PER_SECOND', { default: 100, min: 1, max: 1_000_000 }),
  /** How long a resolved token is trusted while the rotation broadcast is connected. */
  tokenCacheTtlMs: int('TOKEN_CACHE_TTL_MS', { default: 30_000, min: 0, max: 3_600_000 }),
  /** Unknown tokens remembered (1 s each, least recently used dropped first); valid ones are kept apart. */
  tokenNegativeCacheSize: int('TOKEN_NEGATIVE_CACHE_SIZE', { default: 10_000, min: 1, max: 10_000_000 }),
  upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', { default: 10_000, min: 100 }),
  internalAuthSecrets,
  /** Shared store for the per-token rate limit across replicas; unset keeps the limit in memory per replica. */
  redisUrl: optionalUrl('REDIS_URL', ['redis', 'rediss']),
  /** Prepended to every Redis key, so environments (and test files) share a Redis safely. */
  redisPrefix: str('REDIS_PREFIX', { default: 'dw:' }),
  /** While Redis is unreachable: `open` limits per replica in memory, `closed` answers 503. */
  rateLimitRedisDown: oneOf('RATE_LIMIT_REDIS_DOWN', ['open', 'closed'] as const, 'open'),
  /** Requests with a bad token one client address may make a minute (burst of the same size) before 429. */
  badTokenLimitPerMinute: int('BAD_TOKEN_LIMIT_PER_MINUTE', { default: 60, min: 1, max: 1_000_000 }),
  /** Proxies in front of the gateway whose X-Forwarded-For is trusted for the client address (0: none). */
  trustProxyHops: int('TRUST_PROXY_HOPS', { default: 0, min: 0, max: 10 }),
};

export const transactionsSpec = {
  ...common,
  ...database,
  ...amqp,
  port: port('TRANSACTIONS_PORT', localDefaults.TRANSACTIONS_PORT),
  adminToken: optionalStr('ADMIN_TOKEN'),
  internalAuthSecrets,
  sandboxSettleMs: int('SANDBOX_SETTLE_MS', { default: 0, min: 0, max: 86_400_000 }),
  allowPrivateHosts,
  /** Events, their deliveries and attempts older than this are removed (transactions are kept); 0 keeps them forever. */
  eventRetentionDays: int('EVENT_RETENTION_DAYS', { default: 90, min: 0, max: 36_500 }),
  /** Series of attempts a merchant may start for one event (redeliverCallback, recoverCallbacks); more answer 409. */
  redeliveryMaxSeries: int('REDELIVERY_MAX_SERIES', { default: 10, min: 1, max: 1_000 }),
  /** CSV exports one merchant may have streaming at once in this process; more answer 429. */
  exportConcurrencyPerMerchant: int('EXPORT_CONCURRENCY_PER_MERCHANT', { default: 2, min: 1, max: 100 }),
  /** CSV exports this process streams at once, every merchant together; more answer 429. */
  exportConcurrency: int('EXPORT_CONCURRENCY', { default: 8, min: 1, max: 1_000 }),
  /** Bytes of rows one export reads from PostgreSQL at a time (its page, sized for the largest rows). */
  exportPageBytes: int('EXPORT_PAGE_BYTES', { default: 1_048_576, min: 65_536, max: 67_108_864 }),
  /** Connections the exports of this process share (apart from the pool of creates and reads). */
  exportDatabasePoolSize: int('EXPORT_DATABASE_POOL_SIZE', { default: 2, min: 1, max: 50 }),
};

export const callbackSpec = {
  ...common,
  ...database,
  ...amqp,
  port: port('CALLBACK_PORT', localDefaults.CALLBACK_PORT),
  callbackTimeoutMs: int('CALLBACK_TIMEOUT_MS', { default: 15_000, min: 1, max: 600_000 }),
  retryDelaysMs: intList('CALLBACK_RETRY_DELAYS_MS', {
    default: [5_000, 10_000, 20_000, 40_000, 80_000],
    min: 1,
    max: 86_400_000,
  }),
  /** Messages this process holds at once: in flight, or waiting for their merchant's next slot. */
  prefetch: int('CALLBACK_PREFETCH', { default: 1000, min: 1, max: 5000 }),
  /** The same for the manual lane (recoveries, redeliveries, sweeps): small, so a recovery never holds much. */
  manualPrefetch: int('CALLBACK_MANUAL_PREFETCH', { default: 128, min: 1, max: 5000 }),
  /** A merchant's share: callbacks in flight at once per merchant and process (docs/callbacks.md). */
  merchantConcurrency: int('CALLBACK_MERCHANT_CONCURRENCY', { default: 64, min: 1, max: 1000 }),
  /** The share of a merchant whose endpoint is slow (attempts take longer than CALLBACK_SLOW_AFTER_MS). */
  slowMerchantConcurrency: int('CALLBACK_SLOW_MERCHANT_CONCURRENCY', { default: 4, min: 1, max: 1000 }),
  slowAfterMs: int('CALLBACK_SLOW_AFTER_MS', { default: 1000, min: 1, max: 600_000 }),
  /** Hand-overs of one message from the delivery queue before it is parked (RabbitMQ's x-delivery-limit). */
  deliveryLimit: int('CALLBACK_DELIVERY_LIMIT', { default: 20, min: 1, max: 1000 }),
  /** How often a replica looks for deliveries that nothing has been seen of (the sweeper). */
  sweepIntervalMs: int('CALLBACK_SWEEP_INTERVAL_MS', { default: 30_000, min: 100, max: 3_600_000 }),
  /** Unseen this long, a pending or retrying delivery is published again; 0 derives it from the longest waits. */
  sweepAfterMs: int('CALLBACK_SWEEP_AFTER_MS', { default: 0, min: 0, max: 86_400_000 }),
  allowPrivateHosts,
};

export const uiSpec = {
  ...common,
  port: port('UI_PORT', localDefaults.UI_PORT),
  transactionsUrl: url('TRANSACTIONS_URL', { default: LOCAL_TRANSACTIONS_URL, protocols: ['http', 'https'] }),
  upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', { default: 10_000, min: 100 }),
  internalAuthSecrets,
};

export type GatewayConfig = ConfigOf<typeof gatewaySpec>;
export type TransactionsConfig = ConfigOf<typeof transactionsSpec>;
export type CallbackConfig = ConfigOf<typeof callbackSpec>;
export type UiConfig = ConfigOf<typeof uiSpec>;

export const loadGatewayConfig = (env: Env = process.env): GatewayConfig => parseEnv(gatewaySpec, env);
export const loadTransactionsConfig = (env: Env = process.env): TransactionsConfig => parseEnv(transactionsSpec, env);
export const loadCallbackConfig = (env: Env = process.env): CallbackConfig => parseEnv(callbackSpec, env);
export const loadUiConfig = (env: Env = process.env): UiConfig => parseEnv(uiSpec, env);
