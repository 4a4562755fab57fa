/**
 * The host rule of a callback URL (docs/api.md#callback-urls): when private hosts are not allowed, the host
 * must not be, nor resolve to, a non-public address. Checked when the merchant saves the URL so
 * a mistake is reported at once; the sender checks again at connect time (see guarded-lookup.ts)
 * because DNS can change between the two.
 */
import { ipLiteralOf } from './ip-literal';
import { isPublicAddress } from './is-public-address';
import { defaultHostResolver } from './resolve-host';

/** Every address a host name resolves to, IPv4 and IPv6 alike. */
export type HostLookup = (host: string) => Promise<string[]>;

/** The bounded resolver (hosts file, then c-ares with a deadline): never the libuv threadpool. */
export const systemLookup: HostLookup = async (host) => (await defaultHostResolver()(host)).map((entry) => entry.address);

/**
 * The one reason given for any host name that may not be called, whether it resolves to a private
 * address or not at all: naming the address, or telling the two apart, would let a merchant map the
 * internal DNS names by trying them.
 */
export const NOT_PUBLIC_HOST = 'url host is not a public host: it must resolve, and only to public addresses';

/** Null when the host may be called, else a reason that tells the merchant what to fix. */
export async function publicHostProblem(hostname: string, lookup: HostLookup): Promise<string | null> {
  const literal = ipLiteralOf(hostname);
  if (literal !== null) {
    return isPublicAddress(literal) ? null : 'url host is not a public address';
  }
  if (isLocalhost(hostname)) return 'url host must be a public host name, not localhost';

  let addresses: string[];
  try {
    addresses = await lookup(hostname);
  } catch {
    addresses = [];
  }
  // Any private answer is enough: the client may pick any of them, and an attacker controls which.
  return addresses.length > 0 && addresses.every(isPublicAddress) ? null : NOT_PUBLIC_HOST;
}

/** RFC 6761 reserves `localhost` and every name under it for loopback, whatever DNS says. */
function isLocalhost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
