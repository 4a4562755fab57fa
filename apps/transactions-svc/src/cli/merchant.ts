// `npm run merchant:create -- --name "Acme Ltd"`, `merchant:rotate-token -- --merchant <id>`,
// `merchant:rotate-secret -- --merchant <id>`: see MERCHANT_HELP for the output.
import { parseEnv, transactionsSpec } from '@dw/config';
import { openTokenRotationPublisher, type TokenRotationPublisher } from '@dw/messaging';
import { runMerchantCli } from './merchant-commands';

/**
 * The gateways' token-cache invalidation: a RabbitMQ fanout every gateway replica listens to, so
 * the old token stops working on each of them within a second. Opened before the rotation.
 */
export async function openTokenBroadcast(): Promise<TokenRotationPublisher> {
  const { amqpUrl, amqpPrefix } = parseEnv({ amqpUrl: transactionsSpec.amqpUrl, amqpPrefix: transactionsSpec.amqpPrefix });
  return openTokenRotationPublisher(amqpUrl, amqpPrefix).catch((error: unknown) => {
    throw new Error(`RabbitMQ is not reachable at ${brokerAddress(amqpUrl)} (AMQP_URL): ${error instanceof Error ? error.message : String(error)}`);
  });
}

/** host:port of an AMQP URL, never its credentials. */
function brokerAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === 'amqps:' ? 5671 : 5672)}`;
  } catch {
    return 'an unparsable address';
  }
}

if (require.main === module) {
  void runMerchantCli(process.argv.slice(2), process.env, { openTokenBroadcast }).then((code) => {
    process.exitCode = code;
  });
}
