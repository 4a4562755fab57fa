// `npm run merchant:create -- --name "Acme Ltd"`, `merchant:rotate-token -- --merchant <id>`,
// `merchant:rotate-secret -- --merchant <id>`: see MERCHANT_HELP for the output.
import { parseEnv, transactionsSpec } from '@dw/config';
import { publishTokenRotated } from '@dw/messaging';
import { runMerchantCli } from './merchant-commands';

/**
 * HOOK POINT: runs after a token rotation has committed, before the new credentials are printed.
 * The gateway's token-cache invalidation broadcast plugs in here so the old token stops working
 * on every replica within a second. A failure is reported on stderr, never loses the new token.
 */
export async function notifyTokenRotated(merchantId: string): Promise<void> {
  const config = loadRotationBroadcastConfig();
  await publishTokenRotated(config.amqpUrl, config.amqpPrefix, merchantId);
}

function loadRotationBroadcastConfig() {
  const { amqpUrl, amqpPrefix } = parseEnv({ amqpUrl: transactionsSpec.amqpUrl, amqpPrefix: transactionsSpec.amqpPrefix });
  return { amqpUrl, amqpPrefix };
}

if (require.main === module) {
  void runMerchantCli(process.argv.slice(2), process.env, { notifyTokenRotated }).then((code) => {
    process.exitCode = code;
  });
}
