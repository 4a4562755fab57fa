/**
 * Every setting of every service, in one place: names, defaults, ranges and the words of the
 * README's configuration table (`npm run docs:config` writes it; a test fails when they differ).
 */
import { bool, int, intList, oneOf, optionalStr, optionalUrl, parseEnv, port, secretList, str, url, type ConfigOf, type Env } from './env';

// One machine's defaults, in JSON so that `npm start` (scripts/start.mjs, plain Node) reads the same.
import localDefaults from './local-defaults.json';
import unreachable from './unreachable-codes.json';

export const DEFAULT_DATABASE_URL = localDefaults.DATABASE_URL;
export const DEFAULT_AMQP_URL = localDefaults.AMQP_URL;
/** Codes of a connection that never reached a server: "PostgreSQL/RabbitMQ is not reachable at …". */
export const UNREACHABLE_ERROR_CODES: ReadonlySet<string> = new Set(unreachable.codes);
const LOCAL_TRANSACTIONS_URL = `http://127.0.0.1:${localDefaults.TRANSACTIONS_PORT}`;
const LOCAL_UI_URL = `http://127.0.0.1:${localDefaults.UI_PORT}`;

const common = {
  host: str('HOST', {
    default: '0.0.0.0',
    description: 'the address to listen on (`npm start`: the gateway only; the others listen on `INTERNAL_HOST`)',
  }),
  logLevel: str('LOG_LEVEL', { default: 'info', description: 'pino log level' }),
  /** Prepended to every exchange and queue name, so environments (and test files) share a broker safely. */
  amqpPrefix: str('AMQP_PREFIX', { default: '', docDefault: 'empty', description: 'prefix of every exchange and queue name' }),
  shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', { default: 10_000, min: 100, description: 'graceful-shutdown budget on SIGTERM' }),
  /** A second port serving only GET /metrics (0: none, /metrics on the main port; set: there only). */
  metricsPort: port('METRICS_PORT', 0, {
    docDefault: '0 (none)',
    description: 'serve `GET /metrics` on this port only, not on the service\'s own port (the Helm chart uses 9464); 0: on the own port',
  }),
  /**
   * A connection with no byte moving either way for this long is closed: a client that stopped
   * reading a response (or an upstream that stopped sending) holds nothing for longer.
   */
  clientStallTimeoutMs: int('CLIENT_STALL_TIMEOUT_MS', {
    default: 30_000,
    min: 1_000,
    max: 600_000,
    description: 'a connection with no byte moving either way for this long is closed (a client that stopped reading)',
  }),
};

const database = {
  databaseUrl: url('DATABASE_URL', { default: DEFAULT_DATABASE_URL, protocols: ['postgres', 'postgresql'], description: 'PostgreSQL (and the migrations)' }),
  databasePoolSize: int('DATABASE_POOL_SIZE', { default: 10, min: 1, max: 200, description: 'connections per process' }),
};

const amqp = { amqpUrl: url('AMQP_URL', { default: DEFAULT_AMQP_URL, protocols: ['amqp', 'amqps'], description: 'RabbitMQ' }) };

const allowPrivateHosts = bool('CALLBACK_ALLOW_PRIVATE_HOSTS', false, {
  docDefault: '`false`; `npm start` and tests: `true`',
  description: 'allow callback URLs on loopback, private and link-local addresses',
});

/**
 * The shared secret(s) with which the gateway (and the ui) prove to the internal services that a
 * request came through the gateway. Required: without it those services would trust anyone who
 * reaches their port. The first signs, every one verifies (rotation without downtime).
 */
const internalAuthSecrets = secretList('INTERNAL_AUTH_SECRETS', {
  minLength: 32,
  hint: 'e.g. `openssl rand -base64 32`; the same value in api-gateway, transactions-svc and ui',
  docDefault: '**required**; `npm start` generates one',
  description:
    'comma-separated secrets (≥ 32 characters) with which the gateway proves its requests; the first signs, all verify (rotate in three rollouts: `old,new`, `new,old`, then `new`). See [the trust model](docs/decisions.md#the-trust-model)',
});

const upstreamTimeoutMs = int('UPSTREAM_TIMEOUT_MS', { default: 10_000, min: 100, description: 'bound on one upstream request' });
const transactionsUrl = url('TRANSACTIONS_URL', { default: LOCAL_TRANSACTIONS_URL, protocols: ['http', 'https'], description: 'upstream: transactions-svc' });

export const gatewaySpec = {
  ...common,
  ...amqp,
  port: port('GATEWAY_PORT', localDefaults.GATEWAY_PORT, { description: 'the public port' }),
  transactionsUrl,
  uiUrl: url('UI_URL', { default: LOCAL_UI_URL, protocols: ['http', 'https'], description: 'upstream: ui' }),
  rateLimitPerSecond: int('RATE_LIMIT_PER_SECOND', { default: 100, min: 1, max: 1_000_000, description: 'per-token bucket, burst of the same size' }),
  /** A merchant's requests in progress at once through each upstream; more wait (up to UPSTREAM_TIMEOUT_MS), then 429. */
  merchantConcurrency: int('GATEWAY_MERCHANT_CONCURRENCY', {
    default: 16,
    min: 1,
    max: 10_000,
    description: "a merchant's requests in progress at once per upstream in this gateway process; more wait their turn (at most `UPSTREAM_TIMEOUT_MS`, as many as the rate limit's burst), then 429",
  }),
  /** A merchant's list pages in progress at once through the ui: each can be megabytes to build and send. */
  merchantPageConcurrency: int('GATEWAY_MERCHANT_PAGE_CONCURRENCY', {
    default: 1,
    min: 1,
    max: 10_000,
    description:
      "a merchant's list pages (`GET /ui/viewTransaction` without `id`, JSON or HTML) in progress at once in this gateway process; more wait their turn like other requests",
  }),
  /** The bytes a second of a merchant's viewer answers through this gateway, after a burst of the same size. */
  merchantViewBytesPerSecond: int('GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND', {
    default: 8 * 1024 * 1024,
    min: 64 * 1024,
    max: 1024 * 1024 * 1024,
    description:
      "bytes a second of a merchant's `/ui/…` answers through this gateway process (list pages, downloads, statements), after a burst of the same size; beyond it they are sent at that pace",
  }),
  /** How long a resolved token is trusted while the rotation broadcast is connected. */
  tokenCacheTtlMs: int('TOKEN_CACHE_TTL_MS', {
    default: 30_000,
    min: 0,
    max: 3_600_000,
    description: 'token cache while the rotation broadcast is connected (1 s otherwise)',
  }),
  /** Unknown tokens remembered (1 s each, least recently used dropped first); valid ones are kept apart. */
  tokenNegativeCacheSize: int('TOKEN_NEGATIVE_CACHE_SIZE', {
    default: 10_000,
    min: 1,
    max: 10_000_000,
    description: 'unknown tokens remembered for 1 s (LRU; valid tokens are cached apart and never evicted by them)',
  }),
  upstreamTimeoutMs,
  internalAuthSecrets,
  /** Shared store for the per-token rate limit across replicas; unset keeps the limit in memory per replica. */
  redisUrl: optionalUrl('REDIS_URL', ['redis', 'rediss'], {
    docDefault: 'unset (limit per replica, in memory)',
    description: 'share the per-token rate limit across replicas',
  }),
  /** Prepended to every Redis key, so environments (and test files) share a Redis safely. */
  redisPrefix: str('REDIS_PREFIX', { default: 'dw:', description: 'prefix of its Redis keys' }),
  /** While Redis is unreachable: `open` limits per replica in memory, `closed` answers 503. */
  rateLimitRedisDown: oneOf('RATE_LIMIT_REDIS_DOWN', ['open', 'closed'] as const, 'open', {
    description: 'while Redis is unreachable: `open` limits per replica in memory, `closed` answers 503',
  }),
  /** Requests with a bad token one client address may make a minute (burst of the same size) before 429. */
  badTokenLimitPerMinute: int('BAD_TOKEN_LIMIT_PER_MINUTE', {
    default: 60,
    min: 1,
    max: 1_000_000,
    description: 'requests with a bad token per client address (burst of the same size), then `429`',
  }),
  /** Requests to the token-less pages (/docs, /openapi.json, /ui and its assets) one client address may make a minute (burst of the same size) before 429. */
  publicLimitPerMinute: int('PUBLIC_LIMIT_PER_MINUTE', {
    default: 600,
    min: 1,
    max: 1_000_000,
    description: 'requests to the token-less pages (`/docs`, `/openapi.json`, `/ui` and its assets) per client address (burst of the same size), then `429`',
  }),
  /** Connections one peer address may hold open at once (TRUST_PROXY_HOPS=0 only); beyond: 429 and closed. */
  connectionsPerAddress: int('GATEWAY_CONNECTIONS_PER_ADDRESS', {
    default: 256,
    min: 1,
    max: 1_000_000,
    description: 'connections one client address may hold open (only with `TRUST_PROXY_HOPS=0`); beyond it a connection gets `429` and is closed',
  }),
  /** Connections the gateway holds open at once, all addresses together; beyond: closed at once. */
  maxConnections: int('GATEWAY_MAX_CONNECTIONS', {
    default: 10_000,
    min: 1,
    max: 1_000_000,
    description: 'connections open at once, all clients together (about 10 KB each); beyond it a new connection is closed at once, and with it the idle ones (kept alive, or silent for 1 s)',
  }),
  /** Proxies in front of the gateway whose X-Forwarded-For is trusted for the client address (0: none). */
  trustProxyHops: int('TRUST_PROXY_HOPS', {
    default: 0,
    min: 0,
    max: 10,
    description: 'proxies whose `X-Forwarded-For` gives the client address (1 behind an ingress)',
  }),
};

export const transactionsSpec = {
  ...common,
  ...database,
  ...amqp,
  port: port('TRANSACTIONS_PORT', localDefaults.TRANSACTIONS_PORT, { description: 'its port' }),
  adminToken: optionalStr('ADMIN_TOKEN', { docDefault: 'unset (operator API closed)', description: 'the operator API’s `x-admin-token`' }),
  internalAuthSecrets,
  sandboxSettleMs: int('SANDBOX_SETTLE_MS', {
    default: 0,
    min: 0,
    max: 86_400_000,
    docDefault: '0 (off); `npm start`: 3000',
    description: 'the sandbox settler completes (or, for amounts ending in `.66`, fails) a pending transaction this long after creation',
  }),
  allowPrivateHosts,
  /** Events, their deliveries and attempts older than this are removed (transactions are kept); 0 keeps them forever. */
  eventRetentionDays: int('EVENT_RETENTION_DAYS', {
    default: 90,
    min: 0,
    max: 36_500,
    docDefault: '90 (0: keep forever)',
    description:
      'events, callback deliveries and attempts older than this are removed by a job every replica runs (transactions are kept; [retention](docs/deploy.md#retention))',
  }),
  redeliveryMaxSeries: int('REDELIVERY_MAX_SERIES', {
    default: 10,
    min: 1,
    max: 1_000,
    description: 'series of attempts a merchant may start for one event (redeliverCallback, recoverCallbacks); more answer 409',
  }),
  exportConcurrencyPerMerchant: int('EXPORT_CONCURRENCY_PER_MERCHANT', {
    default: 2,
    min: 1,
    max: 100,
    description: 'downloads (transaction CSVs and statements together) one merchant may have streaming at once in this process; more answer 429',
  }),
  exportConcurrency: int('EXPORT_CONCURRENCY', {
    default: 8,
    min: 1,
    max: 1_000,
    description: 'downloads (transaction CSVs and statements) this process streams at once, every merchant together; more answer 429',
  }),
  exportPageBytes: int('EXPORT_PAGE_BYTES', {
    default: 1_048_576,
    min: 65_536,
    max: 67_108_864,
    description: 'bytes of rows one export reads from PostgreSQL at a time (its page, sized for the largest rows)',
  }),
  exportDatabasePoolSize: int('EXPORT_DATABASE_POOL_SIZE', {
    default: 2,
    min: 1,
    max: 50,
    description: 'connections the exports of this process share, apart from the pool of creates and reads',
  }),
};

export const callbackSpec = {
  ...common,
  ...database,
  ...amqp,
  port: port('CALLBACK_PORT', localDefaults.CALLBACK_PORT, { description: 'its port' }),
  callbackTimeoutMs: int('CALLBACK_TIMEOUT_MS', { default: 15_000, min: 1, max: 600_000, description: 'wait for a merchant’s reply' }),
  retryDelaysMs: intList('CALLBACK_RETRY_DELAYS_MS', {
    default: [5_000, 10_000, 20_000, 40_000, 80_000],
    min: 1,
    max: 86_400_000,
    docDefault: '`5000,10000,20000,40000,80000`',
    description: 'the waits before each retry (the outbox relay of transactions-svc declares the same queues)',
  }),
  /** Messages this process holds at once: in flight, or waiting for their merchant's next slot. */
  prefetch: int('CALLBACK_PREFETCH', {
    default: 1000,
    min: 1,
    max: 5000,
    description: 'messages held at once (in flight or waiting for their merchant’s slot)',
  }),
  /** The same for the manual lane (recoveries, redeliveries, sweeps): small, so a recovery never holds much. */
  manualPrefetch: int('CALLBACK_MANUAL_PREFETCH', {
    default: 128,
    min: 1,
    max: 5000,
    description:
      'the same for the manual lane (recoveries, redeliveries, sweeps), kept apart from new callbacks ([lanes](docs/callbacks.md#fair-delivery-what-one-merchants-endpoint-can-cost))',
  }),
  /** A merchant's share: callbacks in flight at once per merchant and process (docs/callbacks.md). */
  merchantConcurrency: int('CALLBACK_MERCHANT_CONCURRENCY', {
    default: 64,
    min: 1,
    max: 1000,
    description: 'a merchant’s callbacks in flight at once ([fair delivery](docs/callbacks.md#fair-delivery-what-one-merchants-endpoint-can-cost))',
  }),
  /** The share of a merchant whose endpoint is slow (attempts take longer than CALLBACK_SLOW_AFTER_MS). */
  slowMerchantConcurrency: int('CALLBACK_SLOW_MERCHANT_CONCURRENCY', { default: 16, min: 1, max: 1000, description: 'the same while its endpoint is slow' }),
  slowAfterMs: int('CALLBACK_SLOW_AFTER_MS', {
    default: 1000,
    min: 1,
    max: 600_000,
    description: 'attempts slower than this (on average, or one in flight) make an endpoint slow',
  }),
  /** Hand-overs of one message from the delivery queue before it is parked (RabbitMQ's x-delivery-limit). */
  deliveryLimit: int('CALLBACK_DELIVERY_LIMIT', {
    default: 20,
    min: 1,
    max: 1000,
    description: 'hand-overs of one message before it is parked in `callbacks.parked` (the sweeper delivers it)',
  }),
  /** How often a replica looks for deliveries that nothing has been seen of (the sweeper). */
  sweepIntervalMs: int('CALLBACK_SWEEP_INTERVAL_MS', {
    default: 30_000,
    min: 100,
    max: 3_600_000,
    description: 'how often a pending or retrying delivery unseen for a while is looked for and published again',
  }),
  /** Unseen this long, a pending or retrying delivery is published again; 0 derives it from the longest waits. */
  sweepAfterMs: int('CALLBACK_SWEEP_AFTER_MS', {
    default: 0,
    min: 0,
    max: 86_400_000,
    docDefault: '0 (derived: longest retry wait + 30 s + timeout + 60 s)',
    description: 'after how long unseen such a delivery is published again',
  }),
  allowPrivateHosts,
};

export const uiSpec = {
  ...common,
  port: port('UI_PORT', localDefaults.UI_PORT, { description: 'its port' }),
  transactionsUrl,
  upstreamTimeoutMs,
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

/** The services each setting belongs to, in the README's order and words. */
export const serviceSpecs = { gateway: gatewaySpec, 'transactions-svc': transactionsSpec, 'callback-svc': callbackSpec, ui: uiSpec } as const;

/** Variables the README documents that no service's config reads: the launchers' and the standard ones. */
export const launcherSettings: ReadonlyArray<{ name: string; default: string; usedBy: string; description: string }> = [
  {
    name: 'INTERNAL_HOST',
    default: '`127.0.0.1`',
    usedBy: '`npm start` only',
    description: 'where transactions-svc, callback-svc and ui listen',
  },
  {
    name: 'NODE_OPTIONS',
    default: '`--max-old-space-size=128 --max-semi-space-size=4` (`npm start`, the image, the chart)',
    usedBy: 'all',
    description: "V8's heap bound, which keeps each service under 150 MB RSS; raise it with the container's memory limit ([why](docs/decisions.md))",
  },
  {
    name: 'DEMO_RECEIVER_PORT',
    default: '3009',
    usedBy: '`npm start` only',
    description: 'an in-process receiver that logs callbacks, wired to the demo merchant while it has no callback URL',
  },
  {
    name: 'LOG_FORMAT',
    default: 'unset (for a person)',
    usedBy: '`npm start` only',
    description: "`json` prints the services' log lines as they are (one JSON object a line, for a log pipeline); unset, through pino-pretty",
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_*',
    default: 'unset (no export)',
    usedBy: 'all',
    description:
      'traces to Jaeger over OTLP/HTTP (unset: spans not recorded, trace ids still propagated); the standard variables (sampler, resource, batch processor, `tracecontext`/`baggage` propagators; not `b3`/`jaeger`)',
  },
];
