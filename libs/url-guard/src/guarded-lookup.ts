/**
 * Connect-time defence against DNS rebinding: a host that resolved to a public address when the
 * merchant saved the URL may resolve to 127.0.0.1 a minute later. The callback sender passes
 * `guardedLookup(allow)` as undici's `connect: { lookup }` (handed on to net/tls.connect), so the
 * addresses checked are exactly the addresses connected to; there is no second resolution to race.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions, LookupOptions } from 'node:dns';
import { ipLiteralOf } from './ip-literal';
import { isPublicAddress } from './is-public-address';
import { PrivateAddressError } from './private-address-error';

type OneCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;
type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;
type AnyCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The call forms of `dns.lookup`; also assignable to `net.LookupFunction`. */
export interface LookupFunction {
  (hostname: string, callback: OneCallback): void;
  (hostname: string, family: number, callback: OneCallback): void;
  (hostname: string, options: LookupOneOptions, callback: OneCallback): void;
  (hostname: string, options: LookupAllOptions, callback: AllCallback): void;
  (hostname: string, options: LookupOptions, callback: AnyCallback): void;
}

export function guardedLookup(allowPrivateHosts: boolean): LookupFunction {
  if (allowPrivateHosts) return dns.lookup;
  // One loosely typed body behind the overloads, as dns.lookup itself is written.
  return ((hostname: string, optionsOrCallback: number | LookupOptions | AnyCallback, maybeCallback?: AnyCallback) => {
    const [options, callback] =
      typeof optionsOrCallback === 'function'
        ? [{}, optionsOrCallback]
        : [typeof optionsOrCallback === 'number' ? { family: optionsOrCallback } : optionsOrCallback, maybeCallback!];
    // Resolve every address even when one is asked for, so a mixed answer is refused outright.
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.find((entry) => !isPublicAddress(entry.address));
      if (refused) return callback(new PrivateAddressError(hostname, refused.address), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/**
 * net.connect never calls `lookup` for an IP literal, so the sender calls this on the URL's
 * hostname (`[::1]` or `::1`, as WHATWG normalised it) before connecting. Host names pass: their
 * addresses are checked by guardedLookup.
 */
export function assertPublicHost(hostname: string): void {
  const literal = ipLiteralOf(hostname);
  if (literal !== null && !isPublicAddress(literal)) throw new PrivateAddressError(literal, literal);
}
