/**
 * The whole validation of a merchant's callback URL (docs/api.md#callback-urls), as the transactions service
 * runs it on updateCallbackUrlDeposit / updateCallbackUrlWithdraw.
 */
import { publicHostProblem, systemLookup, type HostLookup } from './callback-url-host';
import { checkCallbackUrlSyntax } from './callback-url-syntax';

export interface CheckCallbackUrlOptions {
  /** `CALLBACK_ALLOW_PRIVATE_HOSTS`; false in production. */
  allowPrivateHosts: boolean;
  /** Resolves a host name to all its addresses; the bounded c-ares resolver (resolve-host.ts) by default. */
  lookup?: HostLookup;
}

export type CallbackUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/** On success returns the URL exactly as given: what the merchant saved is what they read back. */
export async function checkCallbackUrl(raw: string, opts: CheckCallbackUrlOptions): Promise<CallbackUrlCheck> {
  const syntax = checkCallbackUrlSyntax(raw);
  if (!syntax.ok) return syntax;
  if (!opts.allowPrivateHosts) {
    const problem = await publicHostProblem(syntax.url.hostname, opts.lookup ?? systemLookup);
    if (problem !== null) return { ok: false, reason: problem };
  }
  return { ok: true, url: raw };
}
