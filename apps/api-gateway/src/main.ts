import { ConfigError, loadGatewayConfig } from '@dw/config';
import { runService } from '@dw/http-kit';
import { AmqpConnection, subscribeTokenRotations } from '@dw/messaging';
import { createLogger } from '@dw/telemetry';
import { buildApp } from './app';
import { TokenResolver } from './auth/token-resolver';
import { tokenLookupVia, upstream } from './upstreams';

async function main() {
  const config = loadGatewayConfig();
  const logger = createLogger('api-gateway', config.logLevel);
  const transactions = upstream(config.transactionsUrl, config.upstreamTimeoutMs);
  const ui = upstream(config.uiUrl, config.upstreamTimeoutMs);
  // Token rotations are broadcast on RabbitMQ; the gateway keeps serving while the broker is away.
  const amqp = new AmqpConnection({ url: config.amqpUrl, name: 'api-gateway', logger });
  const resolver = new TokenResolver(tokenLookupVia(transactions), config.tokenCacheTtlMs, () => amqp.isConnected());
  subscribeTokenRotations(amqp, config.amqpPrefix, (merchantId) => resolver.invalidateMerchant(merchantId), {
    onSubscribed: () => resolver.clear(),
  });
  void amqp.start();

  const app = await buildApp({ logger, resolver, rateLimitPerSecond: config.rateLimitPerSecond, transactions, ui });
  app.addHook('onClose', async () => amqp.close());
  await runService({ app, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
