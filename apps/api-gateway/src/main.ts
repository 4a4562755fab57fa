import { ConfigError, loadGatewayConfig } from '@dw/config';
import { InternalAuth, listenerSettings, runMain, runService } from '@dw/http-kit';
import { AmqpConnection, subscribeTokenRotations } from '@dw/messaging';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { REPLY_FROM_ERROR_LOG } from './forwarding';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './auth/rate-limiter';
import { TokenResolver } from './auth/token-resolver';
import { Redis } from 'ioredis';
import { tokenLookupVia, upstream } from './upstreams';

async function main() {
  const config = loadGatewayConfig();
  const logger = createLogger('api-gateway', config.logLevel, undefined, { dropMessages: [REPLY_FROM_ERROR_LOG] });
  const transactions = upstream(config.transactionsUrl, config.upstreamTimeoutMs);
  const ui = upstream(config.uiUrl, config.upstreamTimeoutMs);
  // Token rotations are broadcast on RabbitMQ; the gateway keeps serving while the broker is away.
  const amqp = new AmqpConnection({ url: config.amqpUrl, name: 'api-gateway', logger });
  const internalAuth = new InternalAuth(config.internalAuthSecrets);
  const resolver = new TokenResolver(
    tokenLookupVia(transactions, internalAuth),
    config.tokenCacheTtlMs,
    () => amqp.isConnected(),
    Date.now,
    config.tokenNegativeCacheSize,
  );
  subscribeTokenRotations(amqp, config.amqpPrefix, (merchantId) => resolver.invalidateMerchant(merchantId), {
    onSubscribed: () => resolver.clear(),
  });
  void amqp.start();

  // Shared across replicas through Redis when REDIS_URL is set. No offline queue and short timeouts:
  // while Redis is away a request must fall back (or fail, per RATE_LIMIT_REDIS_DOWN) at once.
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, commandTimeout: 500 })
    : undefined;
  redis?.on('error', () => {}); // reported by the limiter when a request needs it; ioredis reconnects by itself
  const limiter: RateLimiter = redis
    ? new RedisRateLimiter(redis, { prefix: config.redisPrefix, perSecond: config.rateLimitPerSecond, whenDown: config.rateLimitRedisDown, logger })
    : new MemoryRateLimiter(config.rateLimitPerSecond);

  const app = await buildApp({
    logger,
    resolver,
    limiter,
    badTokenLimitPerMinute: config.badTokenLimitPerMinute,
    publicLimitPerMinute: config.publicLimitPerMinute,
    internalAuth,
    trustProxyHops: config.trustProxyHops,
    connections: { perAddress: config.connectionsPerAddress, max: config.maxConnections },
    transactions,
    ui,
    merchantShares: { perMerchant: config.merchantConcurrency, maxWaiting: config.rateLimitPerSecond, waitMs: config.upstreamTimeoutMs },
    pagesPerMerchant: config.merchantPageConcurrency,
    viewBytesPerSecond: config.merchantViewBytesPerSecond,
    listener: listenerSettings(config),
  });
  app.addHook('onClose', async () => {
    await amqp.close();
    redis?.disconnect();
  });
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs, metricsPort: config.metricsPort });
}

runMain(main, [ConfigError]);
