// `npm run merchant:create -- --name "Acme Ltd"`, `merchant:rotate-token -- --merchant <id>`,
// `merchant:rotate-secret -- --merchant <id>`: see MERCHANT_HELP for the output.
import { runMerchantCli } from './merchant-commands';

/**
 * HOOK POINT: runs after a token rotation has committed, before the new credentials are printed.
 * The gateway's token-cache invalidation broadcast plugs in here so the old token stops working
 * on every replica within a second. A failure is reported on stderr, never loses the new token.
 */
export async function notifyTokenRotated(_merchantId: string): Promise<void> {
  // No-op until the gateway cache-invalidation broadcast exists.
}

if (require.main === module) {
  void runMerchantCli(process.argv.slice(2), process.env, { notifyTokenRotated }).then((code) => {
    process.exitCode = code;
  });
}
